"""Producer-id rate quotas per user (seed 002, KIP-936).

``bloom`` holds the time-controlled bloom filters, ``rate`` the token bucket
and sampled stats, ``manager`` the ProducerIdQuotaManager (all sans-I/O, time
as an argument), ``client_quotas`` the quota values set with AlterClientQuotas
and kept in config.dir, and ``service`` the glue the broker shell and the
Produce handler call.
"""

from kipper.broker.quota.manager import ProducerIdQuotaManager, QuotaSettings

__all__ = ["ProducerIdQuotaManager", "QuotaSettings"]
