#!/bin/bash
# Many concurrent readers of one replication-3 file: bytes each DataNode served
# (cairn bench dfsio --threads 64 --files 1, randread), per run.
# usage: spread.sh BINARY RUNS
B=$1; N=$2; D=${SPREAD_DIR:-/tmp/read_spread}; rm -rf $D
$B up --dir $D --rpc-address 127.0.0.1:0 > $D.out 2>&1 &
UP=$!
for i in $(seq 60); do grep -q "Cairn is up" $D.out 2>/dev/null && break; sleep 0.5; done
URL=$(grep -o "Cairn is up: hdfs://[0-9.:]*" $D.out | awk '{print $4}')
$B bench dfsio --fs $URL --files 1 --size 64m --threads 64 --ops write --keep --json > /dev/null || echo WRITEFAIL
for r in $(seq $N); do
  $B bench dfsio --fs $URL --files 1 --size 64m --threads 64 --ops randread --randread-count 2000 --json \
    | python3 -c "
import json,sys; j=json.load(sys.stdin)['results']['randread']
for m in ('pread','seek_read'):
  d=j[m]['datanodes']; print('$r', m, d['read_bytes_sent_per_datanode'], 'max_dev=%.3f' % d['read_spread_max_deviation'])"
done
kill -INT $UP; wait $UP
