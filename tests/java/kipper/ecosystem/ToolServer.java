package kipper.ecosystem;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.utils.internals.Exit;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs Kafka's command-line tools one after another in one JVM, as their own tests do
 * (issue 30): a JVM start per invocation costs seconds on a small machine.
 *
 * Each line on stdin is a JSON request {"main": class, "args": [...], "stdin": text}; the
 * tool's main runs with System.in/out/err swapped for buffers, and Kafka's Exit procedures
 * (every tool leaves through org.apache.kafka.common.utils.internals.Exit) throw instead of
 * ending the JVM. A real exit ends the process on the spot, but a thrown exit can be caught
 * by the tool (several catch Throwable around their work and exit again with 1), so the
 * first exit is what counts: its code, and the output up to that moment. The answer is one
 * line "@@result {json}" on the real stdout with the exit code (0 when main returns, as the
 * shell scripts' JVM would), the captured stdout, stderr and the wall time. Then the process
 * "ends": the shutdown hooks the tool registered through Exit.addShutdownHook run (the
 * console producer closes, and so flushes, its producer there), and the threads the tool
 * started that are still alive are stopped.
 *
 * A request with "background": NAME starts the main in a thread of its own and answers at
 * once; {"join": NAME} waits for it. That is for our own programs that keep a group member
 * alive while a tool describes the group (GroupMember); they print nothing, so the capture
 * of the invocations in between stays theirs alone.
 */
public final class ToolServer {
    static final class ExitCalled extends RuntimeException {
        final int code;

        ExitCalled(int code, String message) {
            super("Exit.exit(" + code + ")" + (message == null ? "" : ": " + message), null, false, false);
            this.code = code;
        }
    }

    // Static counters a tool keeps for one process's life ("Processed a total of N messages"):
    // a fresh process starts them at zero, so each invocation here does too.
    private static final String[][] PER_PROCESS_STATICS = {
        {"org.apache.kafka.tools.consumer.ConsoleConsumer", "messageCount"},
        {"org.apache.kafka.tools.consumer.ConsoleShareConsumer", "messageCount"},
    };

    /** The invocation under way: where its first exit happened. */
    private static final class Invocation {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final List<Runnable> hooks = new ArrayList<>();
        Integer exitCode;
        int outAtExit;
        int errAtExit;

        synchronized void exited(int code) {
            if (exitCode == null) {
                exitCode = code;
                outAtExit = out.size();
                errAtExit = err.size();
            }
        }
    }

    private static volatile Invocation current;

    public static void main(String[] argv) throws Exception {
        PrintStream channel = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        PrintStream realErr = System.err;
        InputStream realIn = System.in;
        Exit.Procedure raise = (code, message) -> {
            Invocation now = current;
            if (now != null)
                now.exited(code);
            throw new ExitCalled(code, message);
        };
        Exit.setExitProcedure(raise);
        Exit.setHaltProcedure(raise);
        Exit.setShutdownHookAdder((name, hook) -> {
            Invocation now = current;
            if (now != null) {
                synchronized (now) {
                    now.hooks.add(hook);
                }
            }
        });
        ObjectMapper json = new ObjectMapper();
        BufferedReader requests = new BufferedReader(new InputStreamReader(realIn, StandardCharsets.UTF_8));
        String line;
        while ((line = requests.readLine()) != null) {
            if (line.isBlank())
                continue;
            JsonNode request = json.readTree(line);
            ObjectNode answer;
            if (request.has("join"))
                answer = join(json, request.get("join").asText(), request.path("timeout_ms").asLong(60_000));
            else if (request.has("background"))
                answer = start(json, request);
            else
                answer = run(json, request, realErr);
            channel.println("@@result " + json.writeValueAsString(answer));
        }
    }

    private static final java.util.Map<String, Thread> BACKGROUND = new java.util.concurrent.ConcurrentHashMap<>();
    private static final java.util.Map<String, String> BACKGROUND_FAILURES = new java.util.concurrent.ConcurrentHashMap<>();

    private static ObjectNode start(ObjectMapper json, JsonNode request) {
        String name = request.get("background").asText();
        String mainClass = request.get("main").asText();
        List<String> args = new ArrayList<>();
        request.get("args").forEach(a -> args.add(a.asText()));
        Thread thread = new Thread(new ThreadGroup("background-" + name), () -> {
            try {
                Class.forName(mainClass).getMethod("main", String[].class).invoke(null, (Object) args.toArray(new String[0]));
            } catch (InvocationTargetException e) {
                BACKGROUND_FAILURES.put(name, String.valueOf(e.getCause()));
            } catch (ReflectiveOperationException e) {
                BACKGROUND_FAILURES.put(name, e.toString());
            }
        }, "background-" + name);
        thread.setDaemon(true);
        BACKGROUND.put(name, thread);
        thread.start();
        ObjectNode answer = json.createObjectNode();
        answer.put("exit", 0);
        answer.put("stdout", "");
        answer.put("stderr", "");
        answer.put("seconds", 0.0);
        return answer;
    }

    private static ObjectNode join(ObjectMapper json, String name, long timeoutMs) throws InterruptedException {
        Thread thread = BACKGROUND.remove(name);
        ObjectNode answer = json.createObjectNode();
        long started = System.nanoTime();
        if (thread != null)
            thread.join(timeoutMs);
        boolean alive = thread != null && thread.isAlive();
        String failure = BACKGROUND_FAILURES.remove(name);
        answer.put("exit", thread == null ? 127 : alive ? 124 : failure != null ? 1 : 0);
        answer.put("stdout", "");
        answer.put("stderr", thread == null ? "no such background program" : alive ? "still running" : failure == null ? "" : failure);
        answer.put("seconds", (System.nanoTime() - started) / 1e9);
        return answer;
    }

    private static int invocations = 0;

    private static ObjectNode run(ObjectMapper json, JsonNode request, PrintStream realErr) throws InterruptedException {
        String mainClass = request.get("main").asText();
        List<String> args = new ArrayList<>();
        request.get("args").forEach(a -> args.add(a.asText()));
        byte[] input = request.has("stdin") ? request.get("stdin").asText().getBytes(StandardCharsets.UTF_8) : new byte[0];
        Invocation invocation = new Invocation();
        ByteArrayOutputStream out = invocation.out;
        ByteArrayOutputStream err = invocation.err;
        PrintStream savedOut = System.out;
        PrintStream savedErr = System.err;
        InputStream savedIn = System.in;
        int[] code = {0};
        String[] failure = {null};
        long started = System.nanoTime();
        PrintStream toolOut = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream toolErr = new PrintStream(err, true, StandardCharsets.UTF_8);
        String stdout, stderr;
        current = invocation;
        // The tool runs in a thread group of its own: every thread it starts joins it, and
        // what is still alive when it is done is stopped, as the end of a process would.
        ThreadGroup group = new ThreadGroup("tool-" + (++invocations));
        Thread main = new Thread(group, () -> {
            try {
                resetStatics(mainClass);
                Class.forName(mainClass).getMethod("main", String[].class).invoke(null, (Object) args.toArray(new String[0]));
            } catch (InvocationTargetException e) {
                Throwable cause = e.getCause();
                if (cause instanceof ExitCalled) {
                    code[0] = ((ExitCalled) cause).code;
                } else {
                    // an uncaught exception out of main: the JVM prints it and exits with 1
                    cause.printStackTrace(System.err);
                    code[0] = 1;
                    failure[0] = cause.toString();
                }
            } catch (ReflectiveOperationException e) {
                code[0] = 127;
                failure[0] = e.toString();
            }
        }, group.getName() + "-main");
        try {
            System.setIn(new ByteArrayInputStream(input));
            System.setOut(toolOut);
            System.setErr(toolErr);
            main.start();
            main.join();
            int outAtEnd = out.size(), errAtEnd = err.size();
            runHooks(invocation, group);
            endLeftovers(group, realErr);
            toolOut.flush();
            toolErr.flush();
            synchronized (invocation) {
                // what the tool printed after its first exit is lost, as in a real exit;
                // what its shutdown hooks printed is not
                byte[] o = out.toByteArray(), e = err.toByteArray();
                int keepOut = invocation.exitCode != null ? invocation.outAtExit : outAtEnd;
                int keepErr = invocation.exitCode != null ? invocation.errAtExit : errAtEnd;
                stdout = new String(o, 0, keepOut, StandardCharsets.UTF_8) + new String(o, outAtEnd, o.length - outAtEnd, StandardCharsets.UTF_8);
                stderr = new String(e, 0, keepErr, StandardCharsets.UTF_8) + new String(e, errAtEnd, e.length - errAtEnd, StandardCharsets.UTF_8);
                if (invocation.exitCode != null) {
                    code[0] = invocation.exitCode;
                    failure[0] = null;
                }
            }
        } finally {
            toolOut.flush();
            toolErr.flush();
            System.setOut(savedOut);
            System.setErr(savedErr);
            System.setIn(savedIn);
            current = null;
        }
        ObjectNode answer = json.createObjectNode();
        answer.put("exit", code[0]);
        answer.put("stdout", stdout);
        answer.put("stderr", stderr);
        answer.put("seconds", (System.nanoTime() - started) / 1e9);
        if (failure[0] != null)
            answer.put("failure", failure[0]);
        return answer;
    }

    /** Its shutdown hooks, each in a thread of its own as the JVM runs them, 30 s at most. */
    private static void runHooks(Invocation invocation, ThreadGroup group) throws InterruptedException {
        List<Runnable> hooks;
        synchronized (invocation) {
            hooks = new ArrayList<>(invocation.hooks);
        }
        List<Thread> running = new ArrayList<>();
        for (Runnable hook : hooks) {
            Thread t = new Thread(group, hook, group.getName() + "-shutdown-hook");
            t.start();
            running.add(t);
        }
        long deadline = System.currentTimeMillis() + 30_000;
        for (Thread t : running)
            t.join(Math.max(1, deadline - System.currentTimeMillis()));
    }

    /** The threads a tool left running (a client it never closed before Exit.exit): stopped. */
    @SuppressWarnings({"deprecation", "removal"})
    private static void endLeftovers(ThreadGroup group, PrintStream log) throws InterruptedException {
        Thread[] threads = new Thread[group.activeCount() + 16];
        int n = group.enumerate(threads, true);
        for (int i = 0; i < n; i++) {
            Thread t = threads[i];
            if (!t.isAlive())
                continue;
            log.println("ToolServer: stopping " + t.getName() + ", left running by " + group.getName());
            t.interrupt();
            t.join(200);
            if (t.isAlive()) {
                try {
                    t.stop();
                } catch (UnsupportedOperationException e) {
                    log.println("ToolServer: this JVM cannot stop threads; " + t.getName() + " lives on");
                }
                t.join(1000);
            }
        }
    }

    private static void resetStatics(String mainClass) throws ReflectiveOperationException {
        for (String[] entry : PER_PROCESS_STATICS) {
            if (!entry[0].equals(mainClass))
                continue;
            Field field = Class.forName(entry[0]).getDeclaredField(entry[1]);
            field.setAccessible(true);
            field.setInt(null, 0);
        }
    }
}
