package kipper.ecosystem.clients;

import org.apache.kafka.clients.admin.AbortTransactionSpec;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.DescribeProducersResult;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.admin.UserScramCredentialDeletion;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.quota.ClientQuotaFilterComponent;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;

/** Kafka's Admin client, one call after another for everything kipper's admin API serves;
 *  each prints what it got back, ids and times left out, or the exception it raised. */
final class AdminChecks {
    private final Common c;
    private final List<String> out = new ArrayList<>();

    AdminChecks(Common c) {
        this.c = c;
    }

    private void call(String name, Callable<Object> body) {
        try {
            out.add("admin " + name + ": " + body.call());
        } catch (Exception e) {
            out.add("admin " + name + ": " + Common.error(e));
        }
    }

    /** Kafka applies an altered config, quota, ACL or credential through its metadata log, a moment after
     *  answering: read it again for up to 10 s until it is what was set. */
    private static String settled(Callable<String> read, String expected) throws Exception {
        return settled(read, expected::equals);
    }

    private static String settled(Callable<String> read, java.util.function.Predicate<String> done) throws Exception {
        long deadline = System.currentTimeMillis() + 10_000;
        String got = attempt(read);
        while (!done.test(got) && System.currentTimeMillis() < deadline) {
            Thread.sleep(200);
            got = attempt(read);
        }
        return got;
    }

    /** What a read gave, or the name of the exception it raised (an entity not there yet). */
    private static String attempt(Callable<String> read) {
        try {
            return read.call();
        } catch (Exception e) {
            return Common.error(e);
        }
    }

    List<String> all() throws Exception {
        String topic = c.name("java-admin");
        String group = c.name("java-admin-group");
        String user = c.name("java-admin-user");
        try (Admin admin = c.admin()) {
            call("createTopics validateOnly", () -> { admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1)),
                new CreateTopicsOptions().validateOnly(true)).all().get(); return "ok"; });
            call("createTopics", () -> { admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1)
                .configs(Map.of("cleanup.policy", "compact", "retention.ms", "3600000")))).all().get(); return "ok"; });
            call("createTopics again", () -> { admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get(); return "ok"; });
            call("createTopics bad config", () -> { admin.createTopics(List.of(new NewTopic(c.name("java-bad"), 1, (short) 1)
                .configs(Map.of("cleanup.policy", "never")))).all().get(); return "ok"; });
            call("listTopics", () -> admin.listTopics().names().get().contains(topic));
            call("describeTopics", () -> {
                TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
                return d.partitions().size() + " partitions, leader " + d.partitions().get(0).leader().id()
                    + ", replicas " + d.partitions().get(0).replicas().size() + ", isr " + d.partitions().get(0).isr().size()
                    + ", internal " + d.isInternal();
            });
            call("describeTopics unknown", () -> admin.describeTopics(List.of(c.name("java-none"))).allTopicNames().get());
            call("createPartitions", () -> { admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(3))).all().get(); return "ok"; });
            call("createPartitions fewer", () -> { admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(2))).all().get(); return "ok"; });
            ConfigResource topicResource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            call("describeConfigs topic", () -> {
                Config config = admin.describeConfigs(List.of(topicResource)).all().get().get(topicResource);
                return Set.of("cleanup.policy", "retention.ms", "segment.bytes").stream()
                    .map(k -> k + "=" + config.get(k).value() + " " + config.get(k).source()).sorted().collect(Collectors.toList());
            });
            call("incrementalAlterConfigs topic", () -> { admin.incrementalAlterConfigs(Map.of(topicResource, List.of(
                new AlterConfigOp(new ConfigEntry("retention.ms", "7200000"), AlterConfigOp.OpType.SET),
                new AlterConfigOp(new ConfigEntry("cleanup.policy", "delete"), AlterConfigOp.OpType.APPEND)))).all().get();
                return settled(() -> admin.describeConfigs(List.of(topicResource)).all().get().get(topicResource)
                    .get("cleanup.policy").value(), "compact,delete"); });
            call("incrementalAlterConfigs bad", () -> { admin.incrementalAlterConfigs(Map.of(topicResource, List.of(
                new AlterConfigOp(new ConfigEntry("retention.ms", "soon"), AlterConfigOp.OpType.SET)))).all().get(); return "ok"; });
            ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, "1");
            call("describeConfigs broker", () -> admin.describeConfigs(List.of(broker)).all().get().get(broker)
                .get("num.partitions").value());
            ConfigResource groupResource = new ConfigResource(ConfigResource.Type.GROUP, group);
            call("incrementalAlterConfigs group", () -> { admin.incrementalAlterConfigs(Map.of(groupResource, List.of(
                new AlterConfigOp(new ConfigEntry("consumer.session.timeout.ms", "50000"), AlterConfigOp.OpType.SET)))).all().get();
                return settled(() -> {
                    ConfigEntry e = admin.describeConfigs(List.of(groupResource)).all().get().get(groupResource)
                        .get("consumer.session.timeout.ms");
                    return e.value() + " " + e.source();
                }, "50000 DYNAMIC_GROUP_CONFIG"); });
            call("describeCluster", () -> admin.describeCluster().nodes().get().size() + " node(s), controller "
                + admin.describeCluster().controller().get().id());
            call("describeFeatures", () -> new TreeSet<>(admin.describeFeatures().featureMetadata().get().finalizedFeatures().keySet()));

            // records, offsets, deletion
            // set timestamps: the largest on records 3 and 7 (max-timestamp answers the first)
            long base = System.currentTimeMillis() - 60_000;
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(c.producer())) {
                for (int i = 0; i < 10; i++)
                    producer.send(new ProducerRecord<>(topic, 0, base + (i == 3 || i == 7 ? 500 : i), "k" + i, "v" + i));
            }
            TopicPartition tp0 = new TopicPartition(topic, 0);
            call("listOffsets", () -> {
                Map<String, Long> r = new TreeMap<>();
                for (Map.Entry<String, OffsetSpec> spec : Map.of("earliest", OffsetSpec.earliest(), "latest", OffsetSpec.latest(),
                        "max-timestamp", OffsetSpec.maxTimestamp()).entrySet()) {
                    ListOffsetsResult.ListOffsetsResultInfo info = admin.listOffsets(Map.of(tp0, spec.getValue())).partitionResult(tp0).get();
                    r.put(spec.getKey(), info.offset());
                }
                return r;
            });
            call("deleteRecords", () -> admin.deleteRecords(Map.of(tp0, RecordsToDelete.beforeOffset(4))).lowWatermarks()
                .get(tp0).get().lowWatermark());
            call("deleteRecords too far", () -> admin.deleteRecords(Map.of(tp0, RecordsToDelete.beforeOffset(99))).lowWatermarks()
                .get(tp0).get().lowWatermark());
            call("describeLogDirs", () -> admin.describeLogDirs(List.of(1)).allDescriptions().get().get(1).values().stream()
                .mapToLong(d -> d.replicaInfos().keySet().stream().filter(tp -> tp.topic().equals(topic)).count()).sum() + " partitions");
            call("describeProducers", () -> {
                DescribeProducersResult.PartitionProducerState s = admin.describeProducers(List.of(tp0)).partitionResult(tp0).get();
                return s.activeProducers().size() + " producer(s), last sequence " + s.activeProducers().get(0).lastSequence();
            });

            // groups and their offsets
            call("alterConsumerGroupOffsets", () -> { admin.alterConsumerGroupOffsets(group, Map.of(tp0, new OffsetAndMetadata(5, "meta")))
                .all().get(); return "ok"; });
            call("listConsumerGroupOffsets", () -> {
                OffsetAndMetadata o = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get().get(tp0);
                return o.offset() + " " + o.metadata();
            });
            call("listGroups", () -> admin.listGroups().all().get().stream().filter(g -> g.groupId().equals(group))
                .map(g -> g.groupId().replace(c.runId, "*") + " " + g.type().orElse(null) + " " + g.groupState().orElse(null))
                .collect(Collectors.toList()));
            call("describeConsumerGroups", () -> {
                ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
                return d.groupState() + " " + d.type() + " " + d.members().size() + " member(s)";
            });
            call("describeConsumerGroups unknown", () -> admin.describeConsumerGroups(List.of(c.name("java-nobody"))).all().get());
            call("deleteConsumerGroupOffsets", () -> { admin.deleteConsumerGroupOffsets(group, Set.of(tp0)).all().get(); return "ok"; });
            call("deleteConsumerGroups", () -> { admin.deleteConsumerGroups(List.of(group)).all().get(); return "ok"; });
            call("deleteConsumerGroups again", () -> { admin.deleteConsumerGroups(List.of(group)).all().get(); return "ok"; });

            // ACLs
            AclBinding binding = new AclBinding(new ResourcePattern(ResourceType.TOPIC, topic, PatternType.LITERAL),
                new AccessControlEntry("User:" + user, "*", AclOperation.READ, AclPermissionType.ALLOW));
            AclBindingFilter mine = new AclBindingFilter(new ResourcePatternFilter(ResourceType.TOPIC, topic, PatternType.ANY),
                AccessControlEntryFilter.ANY);
            call("createAcls", () -> { admin.createAcls(List.of(binding)).all().get(); return "ok"; });
            call("describeAcls", () -> settled(() -> admin.describeAcls(mine).values().get().stream().map(b -> b.entry().operation() + " "
                + b.entry().permissionType()).collect(Collectors.toList()).toString(), got -> got.contains("READ")));
            call("deleteAcls", () -> admin.deleteAcls(List.of(mine)).all().get().size());

            // SCRAM credentials and quotas
            call("alterUserScramCredentials", () -> { admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion(user,
                new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 8192), "pw"))).all().get(); return "ok"; });
            call("describeUserScramCredentials", () -> settled(() -> admin.describeUserScramCredentials(List.of(user)).all().get().get(user)
                .credentialInfos().stream().map(i -> i.mechanism() + " " + i.iterations()).collect(Collectors.toList()).toString(),
                got -> got.contains("SCRAM")));
            call("alterUserScramCredentials delete", () -> { admin.alterUserScramCredentials(List.of(new UserScramCredentialDeletion(user,
                ScramMechanism.SCRAM_SHA_256))).all().get(); return "ok"; });
            ClientQuotaEntity entity = new ClientQuotaEntity(Map.of(ClientQuotaEntity.USER, user));
            call("alterClientQuotas producer_ids_rate", () -> { admin.alterClientQuotas(List.of(new ClientQuotaAlteration(entity,
                List.of(new ClientQuotaAlteration.Op("producer_ids_rate", 10.0))))).all().get(); return "ok"; });
            call("alterClientQuotas producer_byte_rate", () -> { admin.alterClientQuotas(List.of(new ClientQuotaAlteration(entity,
                List.of(new ClientQuotaAlteration.Op("producer_byte_rate", 1048576.0))))).all().get(); return "ok"; });
            call("describeClientQuotas", () -> settled(() -> admin.describeClientQuotas(ClientQuotaFilter.containsOnly(List.of(
                ClientQuotaFilterComponent.ofEntity(ClientQuotaEntity.USER, user)))).entities().get().values().stream()
                .map(TreeMap::new).collect(Collectors.toList()).toString(), got -> got.contains("producer_byte_rate")));

            // transactions
            call("listTransactions", () -> admin.listTransactions().all().get().stream()
                .filter(t -> t.transactionalId().contains(c.runId)).map(t -> t.transactionalId().replace(c.runId, "*") + " " + t.state())
                .sorted().collect(Collectors.toList()));
            call("describeTransactions unknown", () -> admin.describeTransactions(List.of(c.name("java-none"))).all().get());
            call("fenceProducers", () -> { admin.fenceProducers(List.of(c.name("java-fence-id"))).all().get(); return "ok"; });
            call("abortTransaction nothing open", () -> { admin.abortTransaction(new AbortTransactionSpec(tp0, 1234L, (short) 0, 0))
                .all().get(); return "ok"; });

            // share groups
            call("describeShareGroups unknown", () -> admin.describeShareGroups(List.of(c.name("java-no-share"))).all().get()
                .values().stream().map(d -> d.groupState().toString()).collect(Collectors.toList()));

            call("deleteTopics", () -> { admin.deleteTopics(List.of(topic)).all().get(); return "ok"; });
            call("deleteTopics again", () -> { admin.deleteTopics(List.of(topic)).all().get(); return "ok"; });
        }
        return out;
    }
}
