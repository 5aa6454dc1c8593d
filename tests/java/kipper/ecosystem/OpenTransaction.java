package kipper.ecosystem;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.serialization.StringSerializer;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

/**
 * A transactional KafkaProducer that writes a few records to partition 0 of a topic and
 * leaves its transaction open until told to end it (issue 30): kafka-transactions then has an
 * ongoing transaction to list, describe and abort. Prints nothing (ToolServer runs it beside
 * captured tool invocations).
 *
 *   OpenTransaction BOOTSTRAP TRANSACTIONAL_ID TOPIC RECORDS READY_FILE STOP_FILE
 *
 * READY_FILE is written once the records are sent; when STOP_FILE exists the transaction is
 * aborted (if it still can be: an admin abort of its partition fences nothing, but its own
 * end may fail) and the producer closed.
 */
public final class OpenTransaction {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], transactionalId = args[1], topic = args[2];
        int records = Integer.parseInt(args[3]);
        Path ready = Path.of(args[4]), stop = Path.of(args[5]);
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        props.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "600000");
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            producer.initTransactions();
            producer.beginTransaction();
            for (int i = 0; i < records; i++)
                producer.send(new ProducerRecord<>(topic, 0, "k", "open-" + i));
            producer.flush();
            Files.writeString(ready, "ready");
            while (!Files.exists(stop))
                Thread.sleep(100);
            try {
                producer.abortTransaction();
            } catch (KafkaException e) {
                // the tool may have ended it already; nothing of ours to report
            }
        }
    }
}
