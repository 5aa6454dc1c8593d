package kipper.ecosystem;

import kipper.ecosystem.clients.Checks;

/**
 * Kafka's Java clients against a broker (issue 30): the idempotent and the transactional
 * KafkaProducer (a retried transaction after a fencing epoch bump, seed 003), KafkaConsumer in
 * classic and consumer-protocol groups through a rebalance, read_committed, KafkaShareConsumer
 * with ACCEPT, RELEASE and REJECT, and Admin. Every record is counted; each check prints one
 * or more lines with no ids or times in them, so the same program against Kafka and against
 * kipper must print the same lines.
 *
 *   ClientsCheck BOOTSTRAP RUN_ID [CHECK ...]     (checks: see Checks.NAMES; default all)
 */
public final class ClientsCheck {
    public static void main(String[] args) throws Exception {
        Checks.main(args);
    }
}
