package kipper.ecosystem.clients;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ProducerFencedException;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;

/** The idempotent and the transactional KafkaProducer, counted record by record. */
final class ProducerChecks {
    private final Common c;

    ProducerChecks(Common c) {
        this.c = c;
    }

    /** 3,000 keyed records over 3 partitions, five requests in flight: each once, in order. */
    List<String> idempotent() throws Exception {
        String topic = c.name("java-idempotent");
        try (Admin admin = c.admin()) {
            c.createTopic(admin, topic, 3, Map.of());
        }
        Properties p = c.producer();
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "5");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, "4096");
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < 3000; i++)
                sent.add(producer.send(new ProducerRecord<>(topic, "key" + (i % 17), "idem-" + i)));
            producer.flush();
        }
        int acked = 0;
        for (Future<RecordMetadata> f : sent)
            if (f.get().offset() >= 0)
                acked++;
        return List.of("idempotent: " + acked + " acknowledged; read back: "
            + Common.tally(c.readAll(topic, "read_uncommitted")));
    }

    /** Five transactions of 100 records, the third aborted, each with the offsets of a
     *  consume-transform-produce loop: read_committed sees four, read_uncommitted five. */
    List<String> transactions() throws Exception {
        String topic = c.name("java-txn");
        String group = c.name("java-txn-group");
        try (Admin admin = c.admin()) {
            c.createTopic(admin, topic, 2, Map.of());
        }
        Properties p = c.producer();
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, c.name("java-txn-id"));
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            producer.initTransactions();
            for (int t = 0; t < 5; t++) {
                producer.beginTransaction();
                for (int i = 0; i < 100; i++)
                    producer.send(new ProducerRecord<>(topic, "t" + t, "txn" + t + "-" + i));
                producer.sendOffsetsToTransaction(Map.of(new TopicPartition(topic, 0),
                    new OffsetAndMetadata(100L * (t + 1))), new ConsumerGroupMetadata(group));
                producer.flush();  // an abort drops what is still unsent: have it all written first
                if (t == 2)
                    producer.abortTransaction();
                else
                    producer.commitTransaction();
            }
        }
        List<ConsumerRecord<String, String>> committed = c.readAll(topic, "read_committed");
        long aborted = committed.stream().filter(r -> r.value().startsWith("txn2-")).count();
        List<String> out = new ArrayList<>();
        out.add("transactions: read_committed " + Common.tally(committed) + ", of the aborted one " + aborted);
        out.add("transactions: read_uncommitted " + Common.tally(c.readAll(topic, "read_uncommitted")));
        try (Admin admin = c.admin()) {
            Map<TopicPartition, OffsetAndMetadata> offsets =
                admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
            out.add("transactions: the group's committed offset " + offsets.get(new TopicPartition(topic, 0)).offset());
        }
        return out;
    }

    /** Seed 003: a second producer with the same transactional id fences the first (an epoch
     *  bump); the first's commit fails, the second sends the same work again and commits it. */
    List<String> fencedAndRetried() throws Exception {
        String topic = c.name("java-fenced");
        try (Admin admin = c.admin()) {
            c.createTopic(admin, topic, 1, Map.of());
        }
        Properties p = c.producer();
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, c.name("java-fenced-id"));
        String firstEnd;
        try (KafkaProducer<String, String> zombie = new KafkaProducer<>(p);
             KafkaProducer<String, String> successor = new KafkaProducer<>(p)) {
            zombie.initTransactions();
            zombie.beginTransaction();
            for (int i = 0; i < 50; i++)
                zombie.send(new ProducerRecord<>(topic, "w", "work-" + i));
            zombie.flush();
            successor.initTransactions();  // bumps the epoch: the zombie's transaction is aborted
            try {
                zombie.commitTransaction();
                firstEnd = "committed";
            } catch (ProducerFencedException e) {
                firstEnd = "fenced (" + Common.error(e) + ")";
            } catch (KafkaException e) {
                firstEnd = "failed (" + Common.error(e) + ")";
            }
            successor.beginTransaction();
            for (int i = 0; i < 50; i++)
                successor.send(new ProducerRecord<>(topic, "w", "work-" + i));
            successor.commitTransaction();
        }
        return List.of("fenced: the first producer's commit " + firstEnd + "; read_committed "
            + Common.tally(c.readAll(topic, "read_committed")));
    }

    /** The coordinator aborts a transaction past its timeout and bumps the producer's epoch: the
     *  producer can only be closed (Kafka 4.4's transaction version 2 and kipper say so with
     *  different errors, KAFKA_DIFFERENCES.md txn-timed-out-error). A new producer with the same
     *  transactional id (InitProducerId bumps the epoch again, seed 003) retries the same work,
     *  which is committed once. */
    List<String> timedOutAndRetried() throws Exception {
        String topic = c.name("java-timeout");
        try (Admin admin = c.admin()) {
            c.createTopic(admin, topic, 1, Map.of());
        }
        Properties p = c.producer();
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, c.name("java-timeout-id"));
        p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "1000");
        List<String> steps = new ArrayList<>();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            producer.initTransactions();
            producer.beginTransaction();
            for (int i = 0; i < 30; i++)
                producer.send(new ProducerRecord<>(topic, "w", "late-" + i));
            producer.flush();
            // past the timeout and the coordinator's check (every 10 s by default)
            Thread.sleep(12_500);
            step(steps, "commit", producer::commitTransaction);
            step(steps, "abort", producer::abortTransaction);
        } catch (KafkaException e) {
            steps.add("close " + Common.error(e));
        }
        try (KafkaProducer<String, String> successor = new KafkaProducer<>(p)) {
            step(steps, "a new producer retries", () -> {
                successor.initTransactions();
                successor.beginTransaction();
                for (int i = 0; i < 30; i++)
                    successor.send(new ProducerRecord<>(topic, "w", "late-" + i));
                successor.commitTransaction();
            });
        }
        return List.of("timed out: " + String.join(", ", steps) + "; read_committed "
            + Common.tally(c.readAll(topic, "read_committed")));
    }

    private static String step(List<String> steps, String name, Runnable body) {
        String result;
        try {
            body.run();
            result = "ok";
        } catch (KafkaException e) {
            result = Common.error(e);
        }
        steps.add(name + " " + result);
        return result;
    }
}
