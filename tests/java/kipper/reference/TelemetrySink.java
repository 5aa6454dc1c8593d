package kipper.reference;

import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.metrics.MetricsReporter;
import org.apache.kafka.server.telemetry.ClientTelemetryExporter;
import org.apache.kafka.server.telemetry.ClientTelemetryExporterProvider;

import java.util.List;
import java.util.Map;

/**
 * A client-telemetry exporter for the Kafka reference (issue 38): Kafka serves
 * GetTelemetrySubscriptions and PushTelemetry (KIP-714) only when a metrics reporter exports
 * what clients push, as kipper does with its own /metrics. This one accepts every push and
 * keeps nothing, so the conformance suite can put the same telemetry requests to both brokers.
 * Configured as metric.reporters=kipper.reference.TelemetrySink.
 */
public final class TelemetrySink implements MetricsReporter, ClientTelemetryExporterProvider {
    @Override
    public ClientTelemetryExporter clientTelemetryExporter() {
        return (context, payload) -> { };
    }

    @Override public void configure(Map<String, ?> configs) { }
    @Override public void init(List<KafkaMetric> metrics) { }
    @Override public void metricChange(KafkaMetric metric) { }
    @Override public void metricRemoval(KafkaMetric metric) { }
    @Override public void close() { }
}
