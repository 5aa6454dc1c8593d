package kipper.ecosystem.clients;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/** ClientsCheck's checks by name; they run two at a time and report in this order. */
public final class Checks {
    public static final List<String> NAMES = List.of(
        "timed-out-transaction", "idempotent", "transactions", "fenced-transaction", "classic-group",
        "consumer-group", "share", "admin");

    public static void main(String[] args) throws Exception {
        Common c = new Common(args[0], args[1]);
        List<String> wanted = args.length > 2 ? Arrays.asList(args).subList(2, args.length) : NAMES;
        ProducerChecks producers = new ProducerChecks(c);
        ConsumerChecks consumers = new ConsumerChecks(c);
        Map<String, Callable<List<String>>> all = new LinkedHashMap<>();
        all.put("timed-out-transaction", producers::timedOutAndRetried);  // first: it mostly waits
        all.put("idempotent", producers::idempotent);
        all.put("transactions", producers::transactions);
        all.put("fenced-transaction", producers::fencedAndRetried);
        all.put("classic-group", () -> consumers.rebalance("classic"));
        all.put("consumer-group", () -> consumers.rebalance("consumer"));
        all.put("share", () -> new ShareChecks(c).acceptReleaseReject());
        all.put("admin", () -> new AdminChecks(c).all());
        ExecutorService pool = Executors.newFixedThreadPool(2);
        Map<String, Future<List<String>>> running = new LinkedHashMap<>();
        for (String name : wanted) {
            Callable<List<String>> check = all.get(name);
            if (check == null)
                throw new IllegalArgumentException("no check " + name + "; the checks are " + NAMES);
            running.put(name, pool.submit(check));
        }
        pool.shutdown();
        List<String> report = new ArrayList<>();
        for (Map.Entry<String, Future<List<String>>> e : running.entrySet()) {
            try {
                report.addAll(e.getValue().get());
            } catch (java.util.concurrent.ExecutionException failed) {
                Throwable cause = failed.getCause();
                report.add(e.getKey() + ": FAILED " + cause);
                cause.printStackTrace();
            }
        }
        report.forEach(System.out::println);
    }
}
