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
 * shell scripts' JVM would), the captured stdout, stderr and the wall time. Shutdown hooks
 * are not installed: they serve Ctrl-C of a real process.
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
        Exit.setShutdownHookAdder((name, hook) -> { });
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
        Thread thread = new Thread(() -> {
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

    private static ObjectNode run(ObjectMapper json, JsonNode request, PrintStream realErr) {
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
        int code = 0;
        String failure = null;
        long started = System.nanoTime();
        PrintStream toolOut = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream toolErr = new PrintStream(err, true, StandardCharsets.UTF_8);
        current = invocation;
        try {
            resetStatics(mainClass);
            System.setIn(new ByteArrayInputStream(input));
            System.setOut(toolOut);
            System.setErr(toolErr);
            Method main = Class.forName(mainClass).getMethod("main", String[].class);
            main.invoke(null, (Object) args.toArray(new String[0]));
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof ExitCalled) {
                code = ((ExitCalled) cause).code;
            } else {
                // an uncaught exception out of main: the JVM prints it and exits with 1
                cause.printStackTrace(toolErr);
                code = 1;
                failure = cause.toString();
            }
        } catch (ReflectiveOperationException e) {
            code = 127;
            failure = e.toString();
        } finally {
            toolOut.flush();
            toolErr.flush();
            System.setOut(savedOut);
            System.setErr(savedErr);
            System.setIn(savedIn);
            current = null;
        }
        String stdout = out.toString(StandardCharsets.UTF_8);
        String stderr = err.toString(StandardCharsets.UTF_8);
        synchronized (invocation) {
            if (invocation.exitCode != null) {
                code = invocation.exitCode;
                stdout = new String(out.toByteArray(), 0, invocation.outAtExit, StandardCharsets.UTF_8);
                stderr = new String(err.toByteArray(), 0, invocation.errAtExit, StandardCharsets.UTF_8);
                failure = null;
            }
        }
        ObjectNode answer = json.createObjectNode();
        answer.put("exit", code);
        answer.put("stdout", stdout);
        answer.put("stderr", stderr);
        answer.put("seconds", (System.nanoTime() - started) / 1e9);
        if (failure != null)
            answer.put("failure", failure);
        return answer;
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
