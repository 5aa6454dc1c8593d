package kipper.ecosystem;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * A group member that stays in its group until told to leave (issue 30): a KafkaConsumer
 * (classic or consumer group protocol) committing what it reads, or a KafkaShareConsumer
 * accepting what it reads. The tests keep one alive while Kafka's tools describe the group.
 * Prints nothing (it runs beside captured tool invocations, ToolServer).
 *
 *   GroupMember BOOTSTRAP GROUP TOPIC classic|consumer|share CLIENT_ID READY_FILE STOP_FILE
 *
 * READY_FILE is written once the member holds partitions (a share member: once it has read
 * records and then polled empty for a second, so what it read is acknowledged); the member leaves the group and ends when STOP_FILE exists.
 */
public final class GroupMember {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], group = args[1], topic = args[2], protocol = args[3], clientId = args[4];
        Path ready = Path.of(args[5]), stop = Path.of(args[6]);
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        if (protocol.equals("share")) {
            try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(props)) {
                consumer.subscribe(List.of(topic));
                // ready once it has read records and then polled empty for a second: the records
                // it read are acknowledged (implicit acknowledgement rides on the next poll), so
                // the group's share-partition state has moved past them on either broker. (Kafka
                // loads each share partition's state on its first fetch and answers without it
                // meanwhile: one empty poll can come before another partition's records, which a
                // close right after would release; issue 36.)
                int read = 0, emptyPolls = 0;
                boolean told = false;
                while (!Files.exists(stop)) {
                    int count = consumer.poll(Duration.ofMillis(200)).count();
                    read += count;
                    emptyPolls = count == 0 ? emptyPolls + 1 : 0;
                    if (!told && read > 0 && emptyPolls >= 5) {
                        Files.writeString(ready, "ready");
                        told = true;
                    }
                }
            }
            return;
        }
        props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            consumer.subscribe(List.of(topic));
            boolean told = false;
            while (!Files.exists(stop)) {
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
                if (!records.isEmpty())
                    consumer.commitSync();
                if (!told && !consumer.assignment().isEmpty()) {
                    Files.writeString(ready, "ready");
                    told = true;
                }
            }
        }
    }
}
