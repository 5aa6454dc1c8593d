package kipper.ecosystem.clients;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/** KafkaConsumer in a group, classic or consumer protocol (KIP-848): a second member joins
 *  while the first reads, the partitions move, and every record is read exactly once. */
final class ConsumerChecks {
    private static final int RECORDS = 2000;
    private final Common c;

    ConsumerChecks(Common c) {
        this.c = c;
    }

    List<String> rebalance(String protocol) throws Exception {
        String topic = c.name("java-group-" + protocol);
        String group = c.name("java-group-" + protocol);
        try (Admin admin = c.admin()) {
            c.createTopic(admin, topic, 4, Map.of());
        }
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(c.producer())) {
            List<java.util.concurrent.Future<?>> sent = new ArrayList<>();
            for (int i = 0; i < RECORDS; i++)
                sent.add(producer.send(new ProducerRecord<>(topic, "key" + (i % 13), "rec-" + i)));
            for (java.util.concurrent.Future<?> ack : sent)
                ack.get();  // every record acknowledged before the group reads
        }
        List<ConsumerRecord<String, String>> read = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger firstRevoked = new AtomicInteger();
        AtomicBoolean secondAssigned = new AtomicBoolean();
        AtomicBoolean stop = new AtomicBoolean();
        long start = System.currentTimeMillis();
        Trace trace = event -> System.err.printf("[%s group +%d ms, %d read] %s%n", protocol,
            System.currentTimeMillis() - start, read.size(), event);
        // the first member pauses 200 ms a poll of 50, so the second joins while most records are
        // still unread and the partitions move mid-read on both brokers
        Member first = new Member("first", protocol, group, topic, read, firstRevoked, null, stop, 200, trace);
        Member second = new Member("second", protocol, group, topic, read, new AtomicInteger(), secondAssigned, stop, 0, trace);
        Thread t1 = new Thread(first, "first-member");
        t1.start();
        // the second member joins once the first has read part of the topic
        waitFor(() -> read.size() >= 200, read, trace, "the first member to read 200 records");
        trace.event("the second member starts");
        Thread t2 = new Thread(second, "second-member");
        t2.start();
        // everything read, and the second member has its share of the partitions
        if (!waitFor(() -> read.size() >= RECORDS && secondAssigned.get(), read, trace, "every record read, the second member assigned"))
            for (Member m : List.of(first, second))
                trace.event("the " + m.name + " member polled " + (System.currentTimeMillis() - m.polledAt) + " ms ago and " + m.state);
        stop.set(true);
        t1.join();
        t2.join();
        if (first.failure != null || second.failure != null)
            throw new IllegalStateException("a member failed", first.failure != null ? first.failure : second.failure);
        return List.of(protocol + " group: " + Common.tally(new ArrayList<>(read))
            + "; the first member gave up partitions: " + (firstRevoked.get() > 0)
            + ", the second got some: " + secondAssigned.get());
    }

    interface Trace {
        void event(String what);
    }

    /** Waits until done, for as long as records keep arriving: a loaded machine (the whole test
     *  suite beside two brokers) may take long, but 60 s with no record read is a stall, traced. */
    private static boolean waitFor(java.util.function.BooleanSupplier done, List<?> read, Trace trace, String what)
            throws InterruptedException {
        int seen = read.size();
        long moved = System.currentTimeMillis();
        while (!done.getAsBoolean()) {
            Thread.sleep(50);
            if (read.size() != seen) {
                seen = read.size();
                moved = System.currentTimeMillis();
            } else if (System.currentTimeMillis() - moved > 60_000) {
                trace.event("gave up waiting for " + what + ": no record read for 60 s");
                return false;
            }
        }
        return true;
    }

    /** A member that reads, commits after each poll and on giving partitions up. */
    private final class Member implements Runnable {
        private final String name, protocol, group, topic;
        private final List<ConsumerRecord<String, String>> read;
        private final AtomicInteger revoked;
        private final AtomicBoolean assigned, stop;
        private final long pauseMs;
        private final Trace trace;
        volatile Throwable failure;
        /** what the member holds and has read, for the trace when reading stalls */
        volatile String state = "has not polled";
        volatile long polledAt;

        Member(String name, String protocol, String group, String topic, List<ConsumerRecord<String, String>> read,
               AtomicInteger revoked, AtomicBoolean assigned, AtomicBoolean stop, long pauseMs, Trace trace) {
            this.name = name;
            this.trace = trace;
            this.protocol = protocol;
            this.group = group;
            this.topic = topic;
            this.read = read;
            this.revoked = revoked;
            this.assigned = assigned;
            this.stop = stop;
            this.pauseMs = pauseMs;
        }

        @Override
        public void run() {
            Properties p = c.consumer(group);
            p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
            p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "50");
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
                consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                    @Override
                    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                        trace.event("the " + name + " member gives up " + partitions);
                        if (!partitions.isEmpty()) {
                            revoked.incrementAndGet();
                            consumer.commitSync();
                        }
                    }

                    @Override
                    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                        trace.event("the " + name + " member is assigned " + partitions);
                        if (assigned != null && !partitions.isEmpty())
                            assigned.set(true);
                    }
                });
                Map<Integer, Long> lastRead = new java.util.TreeMap<>();
                int count = 0;
                while (!stop.get()) {
                    ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(100));
                    records.forEach(read::add);
                    for (ConsumerRecord<String, String> r : records)
                        lastRead.put(r.partition(), r.offset());
                    count += records.count();
                    polledAt = System.currentTimeMillis();
                    state = "holds " + consumer.assignment()
                        + ", paused " + consumer.paused() + ", has read " + count + ", the last offsets per partition " + lastRead;
                    if (!records.isEmpty()) {
                        consumer.commitSync();
                        if (pauseMs > 0)
                            Thread.sleep(pauseMs);
                    }
                }
            } catch (Throwable e) {
                trace.event("the " + name + " member failed: " + e);
                failure = e;
            }
        }
    }
}
