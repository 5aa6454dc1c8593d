package kipper.ecosystem;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.Properties;

/**
 * Word count with Kafka Streams (issue 30): lines in, each word's running count out, exactly
 * once (processing.guarantee=exactly_once_v2). Grouping by word goes through a repartition
 * topic; the counts live in a store backed by a compacted changelog topic. With the record
 * cache off every count is emitted, so a word's counts on the output topic run 1, 2, 3, ...
 * without a gap or a repeat when every line is counted exactly once.
 *
 *   WordCount BOOTSTRAP APPLICATION_ID INPUT OUTPUT STATE_DIR STOP_FILE [GROUP_PROTOCOL]
 *
 * GROUP_PROTOCOL is "classic" (the default) or "streams" (KIP-1071: the broker assigns the
 * tasks). It prints its state changes ("state RUNNING") and ends, closing cleanly, when
 * STOP_FILE exists.
 */
public final class WordCount {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], applicationId = args[1], input = args[2], output = args[3];
        Path stateDir = Path.of(args[4]), stop = Path.of(args[5]);
        String groupProtocol = args.length > 6 ? args[6] : "classic";
        Properties props = new Properties();
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
        props.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 200);
        props.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, groupProtocol);

        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
            .flatMapValues(line -> Arrays.asList(line.toLowerCase(Locale.ROOT).split("\\W+")))
            .filter((key, word) -> !word.isEmpty())
            .groupBy((key, word) -> word, Grouped.with("by-word", Serdes.String(), Serdes.String()))
            .count(Materialized.as("counts"))
            .toStream()
            .to(output, Produced.with(Serdes.String(), Serdes.Long()));

        try (KafkaStreams streams = new KafkaStreams(builder.build(), props)) {
            streams.setStateListener((now, before) -> System.out.println("state " + now));
            streams.setUncaughtExceptionHandler(e -> {
                System.out.println("uncaught " + e);
                return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse
                    .REPLACE_THREAD;
            });
            streams.start();
            while (!Files.exists(stop))
                Thread.sleep(200);
        }
        System.out.println("closed");
    }
}
