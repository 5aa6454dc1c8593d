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
            for (int i = 0; i < RECORDS; i++)
                producer.send(new ProducerRecord<>(topic, "key" + (i % 13), "rec-" + i));
        }
        List<ConsumerRecord<String, String>> read = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger firstRevoked = new AtomicInteger();
        AtomicBoolean secondAssigned = new AtomicBoolean();
        AtomicBoolean stop = new AtomicBoolean();
        Member first = new Member(protocol, group, topic, read, firstRevoked, null, stop, 20);
        Member second = new Member(protocol, group, topic, read, new AtomicInteger(), secondAssigned, stop, 0);
        Thread t1 = new Thread(first, "first-member");
        t1.start();
        // the second member joins once the first has read part of the topic
        long deadline = System.currentTimeMillis() + 60_000;
        while (read.size() < 200 && System.currentTimeMillis() < deadline)
            Thread.sleep(20);
        Thread t2 = new Thread(second, "second-member");
        t2.start();
        // everything read, and the second member has its share of the partitions
        while ((read.size() < RECORDS || !secondAssigned.get()) && System.currentTimeMillis() < deadline + 60_000)
            Thread.sleep(50);
        stop.set(true);
        t1.join();
        t2.join();
        if (first.failure != null || second.failure != null)
            throw new IllegalStateException("a member failed", first.failure != null ? first.failure : second.failure);
        return List.of(protocol + " group: " + Common.tally(new ArrayList<>(read))
            + "; the first member gave up partitions: " + (firstRevoked.get() > 0)
            + ", the second got some: " + secondAssigned.get());
    }

    /** A member that reads, commits after each poll and on giving partitions up. */
    private final class Member implements Runnable {
        private final String protocol, group, topic;
        private final List<ConsumerRecord<String, String>> read;
        private final AtomicInteger revoked;
        private final AtomicBoolean assigned, stop;
        private final long pauseMs;
        volatile Throwable failure;

        Member(String protocol, String group, String topic, List<ConsumerRecord<String, String>> read,
               AtomicInteger revoked, AtomicBoolean assigned, AtomicBoolean stop, long pauseMs) {
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
                        if (!partitions.isEmpty()) {
                            revoked.incrementAndGet();
                            consumer.commitSync();
                        }
                    }

                    @Override
                    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                        if (assigned != null && !partitions.isEmpty())
                            assigned.set(true);
                    }
                });
                while (!stop.get()) {
                    ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(100));
                    records.forEach(read::add);
                    if (!records.isEmpty()) {
                        consumer.commitSync();
                        if (pauseMs > 0)
                            Thread.sleep(pauseMs);
                    }
                }
            } catch (Throwable e) {
                failure = e;
            }
        }
    }
}
