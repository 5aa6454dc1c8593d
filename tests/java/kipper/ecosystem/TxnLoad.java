package kipper.ecosystem;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.StringSerializer;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;

/**
 * Transactions one after another from one KafkaProducer, each with its records and an offset
 * for a group (sendOffsetsToTransaction), until all are committed, riding out a broker that is
 * killed and started again meanwhile (issue 38: transaction version 2 through a SIGKILL).
 *
 *   TxnLoad BOOTSTRAP TRANSACTIONAL_ID TOPIC GROUP TRANSACTIONS RECORDS_PER_TRANSACTION PROGRESS_FILE [ABORT_EVERY]
 *
 * Record values are "transaction-record", keyed by the transaction, so a reader can count each
 * exactly once; the group's offset on partition 0 of TOPIC is the number of transactions
 * committed. A transaction that fails is aborted and sent again (a new producer after a fatal
 * error); a commit that times out is retried, as the producer's contract asks. PROGRESS_FILE
 * holds the number of transactions committed so far. Prints "committed N transactions, M
 * aborted and sent again, K new producers" at the end. With ABORT_EVERY n, every n-th
 * transaction is first sent with values "aborted-transaction-record" (and an offset) and
 * aborted on purpose: a read_committed reader must never see those.
 */
public final class TxnLoad {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], transactionalId = args[1], topic = args[2], group = args[3];
        int transactions = Integer.parseInt(args[4]), perTxn = Integer.parseInt(args[5]);
        Path progress = Path.of(args[6]);
        int abortEvery = args.length > 7 ? Integer.parseInt(args[7]) : 0;
        int abortedOnPurpose = -1;  // the transaction last aborted on purpose
        int aborted = 0, producers = 1;
        KafkaProducer<String, String> producer = open(bootstrap, transactionalId);
        int i = 0;
        while (i < transactions) {
            try {
                boolean abort = abortEvery > 0 && i % abortEvery == 0 && abortedOnPurpose != i;
                producer.beginTransaction();
                for (int j = 0; j < perTxn; j++)
                    producer.send(new ProducerRecord<>(topic, "t" + i, (abort ? "aborted-" : "") + i + "-" + j));
                producer.sendOffsetsToTransaction(
                        Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(abort ? 1000000 + i : i + 1)),
                        new ConsumerGroupMetadata(group));
                if (abort) {
                    producer.flush();  // every record written to its partition, then aborted
                    producer.abortTransaction();
                    abortedOnPurpose = i;
                    continue;
                }
                commit(producer);
                i++;
                Files.writeString(progress, Integer.toString(i));
            } catch (ProducerFencedException | OutOfOrderSequenceException | AuthorizationException
                     | InvalidProducerEpochException fatal) {
                System.err.println("transaction " + i + ": " + fatal + "; a new producer");
                producer.close();
                producer = open(bootstrap, transactionalId);
                producers++;
                aborted++;
            } catch (KafkaException e) {
                System.err.println("transaction " + i + ": " + e + "; aborted and sent again");
                aborted++;
                try {
                    producer.abortTransaction();
                } catch (KafkaException again) {
                    producer.close();
                    producer = open(bootstrap, transactionalId);
                    producers++;
                }
            }
        }
        producer.close();
        System.out.println("committed " + i + " transactions, " + aborted + " aborted and sent again, "
                + producers + " new producers");
    }

    /** A commit that times out (the broker was away) is retried until it is known. */
    private static void commit(KafkaProducer<String, String> producer) {
        while (true) {
            try {
                producer.commitTransaction();
                return;
            } catch (TimeoutException e) {
                System.err.println("commit timed out, again: " + e.getMessage());
            }
        }
    }

    private static KafkaProducer<String, String> open(String bootstrap, String transactionalId) {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "20000");
        props.put(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, "500");
        props.put(ProducerConfig.LINGER_MS_CONFIG, "2");
        KafkaProducer<String, String> producer = new KafkaProducer<>(props);
        while (true) {
            try {
                producer.initTransactions();
                return producer;
            } catch (TimeoutException e) {
                System.err.println("initTransactions timed out, again: " + e.getMessage());
            }
        }
    }
}
