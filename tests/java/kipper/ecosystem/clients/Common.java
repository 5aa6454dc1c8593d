package kipper.ecosystem.clients;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/** What the checks share: client settings, topics, reading a topic back whole. */
final class Common {
    final String bootstrap;
    final String runId;

    Common(String bootstrap, String runId) {
        this.bootstrap = bootstrap;
        this.runId = runId;
    }

    String name(String base) {
        return base + "-" + runId;
    }

    Properties producer() {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        return p;
    }

    Properties consumer(String group) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        if (group != null)
            p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        return p;
    }

    Admin admin() {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        return Admin.create(p);
    }

    /** Creates a topic and waits until every partition answers ListOffsets at its leader.
     *  Kafka answers CreateTopics once its controller has the topic; the broker leads the new
     *  partitions a moment later. A producer writing before then is answered
     *  NOT_LEADER_OR_FOLLOWER, and with Kafka 4.4 an idempotent producer's retried batches then
     *  met OUT_OF_ORDER_SEQUENCE_NUMBER until its delivery timeout, losing records (seen under
     *  load). Kafka's own tests wait for the leaders the same way. */
    void createTopic(Admin admin, String topic, int partitions, Map<String, String> configs) throws Exception {
        admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1).configs(configs))).all().get();
        Map<TopicPartition, OffsetSpec> ends = new HashMap<>();
        for (int p = 0; p < partitions; p++)
            ends.put(new TopicPartition(topic, p), OffsetSpec.latest());
        long deadline = System.currentTimeMillis() + 30_000;
        while (true) {
            try {
                admin.listOffsets(ends).all().get();
                return;
            } catch (java.util.concurrent.ExecutionException notYet) {  // the topic unknown to this broker yet
                if (!(notYet.getCause() instanceof org.apache.kafka.common.errors.RetriableException)
                        || System.currentTimeMillis() > deadline)
                    throw notYet;
                Thread.sleep(100);
            }
        }
    }

    /** Every record of a topic, from its start to its end (the last stable offset for read_committed). */
    List<ConsumerRecord<String, String>> readAll(String topic, String isolation) {
        Properties p = consumer(null);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        List<ConsumerRecord<String, String>> out = new ArrayList<>();
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p)) {
            int partitions = c.partitionsFor(topic).size();
            List<TopicPartition> tps = IntStream.range(0, partitions).mapToObj(i -> new TopicPartition(topic, i))
                .collect(Collectors.toList());
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> end = new HashMap<>(c.endOffsets(tps));
            long deadline = System.currentTimeMillis() + 60_000;
            while (tps.stream().anyMatch(tp -> c.position(tp) < end.get(tp))) {
                if (System.currentTimeMillis() > deadline)
                    throw new IllegalStateException("could not read " + topic + " to its end " + end);
                ConsumerRecords<String, String> records = c.poll(Duration.ofMillis(200));
                records.forEach(out::add);
            }
        }
        return out;
    }

    /** "n records, d duplicates, o out of order per partition" for values "<producer>-<seq>". */
    static String tally(List<ConsumerRecord<String, String>> records) {
        Map<String, Integer> seen = new HashMap<>();
        Map<String, Integer> last = new HashMap<>();
        int duplicates = 0, disorder = 0;
        for (ConsumerRecord<String, String> r : records) {
            if (seen.merge(r.value(), 1, Integer::sum) > 1)
                duplicates++;
            String[] parts = r.value().split("-");
            int seq = Integer.parseInt(parts[parts.length - 1]);
            String stream = r.partition() + "/" + r.key();
            Integer before = last.put(stream, seq);
            if (before != null && before >= seq)
                disorder++;
        }
        return records.size() + " records, " + seen.size() + " distinct, " + duplicates + " duplicated, "
            + disorder + " out of order";
    }

    static String error(Throwable e) {
        Throwable t = e;
        while ((t instanceof java.util.concurrent.ExecutionException || t instanceof org.apache.kafka.common.KafkaException
                && t.getCause() != null && t.getClass() == org.apache.kafka.common.KafkaException.class) && t.getCause() != null)
            t = t.getCause();
        return t.getClass().getSimpleName();
    }
}
