package kipper.ecosystem;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;

import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.TreeMap;

/**
 * A KafkaShareConsumer in its default, implicit acknowledgement mode that reads COUNT records
 * and closes (issue 36): what its group then holds is compared on Kafka and kipper. With
 * "poll-again" it polls once more before closing, which acknowledges what it read; without,
 * the records of its last poll are released by the close (the client sends no acknowledgement
 * for them), so the group delivers them again. Prints the records it read, by partition, with
 * their delivery counts.
 *
 *   ShareReadThenClose BOOTSTRAP GROUP TOPIC COUNT [poll-again]
 */
public final class ShareReadThenClose {
    public static void main(String[] args) {
        String bootstrap = args[0], group = args[1], topic = args[2];
        int count = Integer.parseInt(args[3]);
        boolean pollAgain = args.length > 4 && args[4].equals("poll-again");
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        TreeMap<String, Integer> read = new TreeMap<>();
        try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(props)) {
            consumer.subscribe(List.of(topic));
            int total = 0;
            long deadline = System.currentTimeMillis() + 30_000;
            while (total < count && System.currentTimeMillis() < deadline) {
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(500));
                for (ConsumerRecord<String, String> r : records) {
                    read.merge("partition " + r.partition() + " delivery " + r.deliveryCount().orElse((short) -1), 1,
                               Integer::sum);
                }
                total += records.count();
            }
            if (pollAgain) {
                read.merge("polled again, records", consumer.poll(Duration.ofMillis(500)).count(), Integer::sum);
            }
        }
        read.forEach((what, n) -> System.out.println(what + ": " + n));
    }
}
