// txnload: transactions one after another from one franz-go client, each with its records,
// until all are committed, riding out a broker that is killed and started again meanwhile
// (issue 38: transaction version 2 through a SIGKILL, tests/interop/test_franz_go.py).
//
//	txnload SEEDS TRANSACTIONAL_ID TOPIC TRANSACTIONS RECORDS_PER_TRANSACTION PROGRESS_FILE
//
// Record values are "transaction-record", so a reader counts each exactly once. A transaction
// whose records fail is aborted and sent again; PROGRESS_FILE holds the number committed.
// Prints "committed N transactions, M aborted and sent again" at the end.
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	seeds, txnID, topic := os.Args[1], os.Args[2], os.Args[3]
	transactions, _ := strconv.Atoi(os.Args[4])
	perTxn, _ := strconv.Atoi(os.Args[5])
	progress := os.Args[6]
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(seeds),
		kgo.TransactionalID(txnID),
		kgo.TransactionTimeout(time.Minute),
		kgo.RetryTimeout(2*time.Minute),
		kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond }),
		kgo.RecordRetries(1000),
		kgo.RequestRetries(1000), // a dial refused while the broker restarts is retried (100 ms apart)
	)
	if err != nil {
		fmt.Fprintln(os.Stderr, "client:", err)
		os.Exit(2)
	}
	defer cl.Close()
	ctx := context.Background()
	aborted := 0
	for i := 0; i < transactions; {
		if err := cl.BeginTransaction(); err != nil {
			fmt.Fprintf(os.Stderr, "transaction %d: begin: %v\n", i, err)
			time.Sleep(100 * time.Millisecond)
			continue
		}
		records := make([]*kgo.Record, perTxn)
		for j := range records {
			records[j] = &kgo.Record{Topic: topic, Key: []byte(fmt.Sprintf("t%d", i)), Value: []byte(fmt.Sprintf("%d-%d", i, j))}
		}
		if err := cl.ProduceSync(ctx, records...).FirstErr(); err != nil {
			fmt.Fprintf(os.Stderr, "transaction %d: produce: %v; aborted and sent again\n", i, err)
			aborted++
			abort(cl, i)
			continue
		}
		if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			// the broker went away under the commit: franz-go cannot know its outcome, and its
			// documented way on is an abort (which fences whatever is still open); whether the
			// transaction committed is then read back, so that it is sent again only if not
			fmt.Fprintf(os.Stderr, "transaction %d: commit unconfirmed: %v\n", i, err)
			abort(cl, i)
			if !committed(seeds, topic, fmt.Sprintf("%d-0", i)) {
				aborted++
				continue
			}
			fmt.Fprintf(os.Stderr, "transaction %d: it had committed\n", i)
		}
		i++
		if err := os.WriteFile(progress, []byte(strconv.Itoa(i)), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "progress:", err)
			os.Exit(2)
		}
	}
	fmt.Printf("committed %d transactions, %d aborted and sent again\n", transactions, aborted)
}

// abort ends the transaction with TryAbort, again while the broker is away (a minute at most).
func abort(cl *kgo.Client, i int) {
	for attempt := 0; ; attempt++ {
		err := cl.EndTransaction(context.Background(), kgo.TryAbort)
		if err == nil {
			return
		}
		fmt.Fprintf(os.Stderr, "transaction %d: abort: %v\n", i, err)
		if attempt == 60 {
			os.Exit(1)
		}
		time.Sleep(time.Second)
	}
}

// committed reads the topic read_committed from the start (once the broker answers again:
// earlier transactions' records are there) until it has been quiet for two seconds, and says
// whether a record with this value is there.
func committed(seeds, topic, value string) bool {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		fmt.Fprintln(os.Stderr, "reader:", err)
		os.Exit(2)
	}
	defer cl.Close()
	deadline := time.Now().Add(time.Minute)
	read := false
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		fetches := cl.PollFetches(ctx)
		cancel()
		found, got := false, false
		fetches.EachRecord(func(r *kgo.Record) {
			got = true
			found = found || string(r.Value) == value
		})
		if found {
			return true
		}
		read = read || got
		if !got && (read || time.Now().After(deadline)) {
			return false
		}
	}
}
