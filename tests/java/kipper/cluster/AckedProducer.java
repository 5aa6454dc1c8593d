package kipper.cluster;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

import java.io.BufferedWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An idempotent KafkaProducer at acks=all writing RECORDS records (value "i") to TOPIC while
 * brokers of its cluster are killed and restarted (issue 39). Every acknowledged record is
 * written to ACKED as "partition offset value", one line each; the last line is
 * "done ACKED FAILED". Records are sent at a steady pace (one every PAUSE_US microseconds in
 * bursts) so that the run spans the brokers' losses.
 *
 *   AckedProducer BOOTSTRAP TOPIC RECORDS ACKED PAUSE_US
 */
public final class AckedProducer {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], topic = args[1];
        int records = Integer.parseInt(args[2]);
        Path acked = Path.of(args[3]);
        long pauseUs = Long.parseLong(args[4]);
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "300000");
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        props.put(ProducerConfig.METADATA_MAX_AGE_CONFIG, "1000");
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        AtomicInteger ok = new AtomicInteger(), failed = new AtomicInteger();
        try (BufferedWriter out = Files.newBufferedWriter(acked);
             KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            for (int i = 0; i < records; i++) {
                String value = Integer.toString(i);
                producer.send(new ProducerRecord<>(topic, Integer.toString(i % 7), value), (meta, error) -> {
                    if (error != null) {
                        failed.incrementAndGet();
                        return;
                    }
                    ok.incrementAndGet();
                    synchronized (out) {
                        try {
                            out.write(meta.partition() + " " + meta.offset() + " " + value + "\n");
                        } catch (java.io.IOException e) {
                            throw new RuntimeException(e);
                        }
                    }
                });
                if (i % 50 == 49)
                    Thread.sleep(pauseUs * 50 / 1000);
            }
            producer.flush();
            synchronized (out) {
                out.write("done " + ok.get() + " " + failed.get() + "\n");
            }
        }
    }
}
