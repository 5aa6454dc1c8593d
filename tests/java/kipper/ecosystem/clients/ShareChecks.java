package kipper.ecosystem.clients;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/** KafkaShareConsumer (KIP-932, seed 004) with explicit acknowledgement: ACCEPT, RELEASE
 *  (the record comes back, its delivery count one higher) and REJECT (it never comes back). */
final class ShareChecks {
    private static final int RECORDS = 30;
    private final Common c;

    ShareChecks(Common c) {
        this.c = c;
    }

    List<String> acceptReleaseReject() throws Exception {
        String topic = c.name("java-share");
        String group = c.name("java-share-group");
        try (Admin admin = c.admin()) {
            c.createTopic(admin, topic, 1, Map.of());
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group), List.of(
                new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET))))
                .all().get();
        }
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(c.producer())) {
            for (int i = 0; i < RECORDS; i++)
                producer.send(new ProducerRecord<>(topic, "k", "share-" + i));
        }
        Map<Integer, List<Integer>> deliveries = new TreeMap<>();  // record -> delivery counts seen
        Map<String, Integer> outcomes = new HashMap<>();
        try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(props(group))) {
            consumer.subscribe(List.of(topic));
            long deadline = System.currentTimeMillis() + 60_000;
            while (settled(outcomes) < RECORDS && System.currentTimeMillis() < deadline) {
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
                for (ConsumerRecord<String, String> r : records) {
                    int n = Integer.parseInt(r.value().substring("share-".length()));
                    int count = r.deliveryCount().map(Short::intValue).orElse(-1);
                    deliveries.computeIfAbsent(n, k -> new ArrayList<>()).add(count);
                    AcknowledgeType type = n % 3 == 0 ? AcknowledgeType.ACCEPT
                        : n % 3 == 2 ? AcknowledgeType.REJECT
                        : count == 1 ? AcknowledgeType.RELEASE : AcknowledgeType.ACCEPT;
                    consumer.acknowledge(r, type);
                    outcomes.merge(type.name(), 1, Integer::sum);
                }
                if (!records.isEmpty())
                    consumer.commitSync();
            }
        }
        int redeliveredAfterRelease = 0, otherRedeliveries = 0;
        for (Map.Entry<Integer, List<Integer>> e : deliveries.entrySet()) {
            List<Integer> counts = e.getValue();
            if (e.getKey() % 3 == 1 && counts.equals(List.of(1, 2)))
                redeliveredAfterRelease++;
            else if (!counts.equals(List.of(1)))
                otherRedeliveries++;
        }
        int laterRecords;
        try (KafkaShareConsumer<String, String> late = new KafkaShareConsumer<>(props(group))) {
            late.subscribe(List.of(topic));
            laterRecords = 0;
            for (int i = 0; i < 5; i++)
                laterRecords += late.poll(Duration.ofMillis(400)).count();
        }
        return List.of("share: " + deliveries.size() + " records delivered; acknowledgements " + new TreeMap<>(outcomes)
            + "; released and delivered again with delivery count 2: " + redeliveredAfterRelease
            + "; delivered other than once: " + otherRedeliveries + "; a later member gets " + laterRecords);
    }

    private static int settled(Map<String, Integer> outcomes) {
        return outcomes.getOrDefault("ACCEPT", 0) + outcomes.getOrDefault("REJECT", 0);
    }

    private Properties props(String group) {
        Properties p = c.consumer(group);
        p.remove(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG);
        p.remove(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG);
        p.put(ConsumerConfig.SHARE_ACKNOWLEDGEMENT_MODE_CONFIG, "explicit");
        return p;
    }
}
