# The partition producers of a hung chaos_producer (what its final flush waits for), from
# the main thread's run_on_client_thread frame. Run by workloads.dump_stacks after the
# stacks; needs the build's debug information (the own-loop driver has no such frame).
set pagination off
set print pretty off
thread 1
frame function run_on_client_thread
set $t = 0
while $t < o->n_topics
set $pt = ps[$t]->pt
printf "topic %d: %d partition producer(s)\n", $t, $pt->n_parts
set $i = 0
while $i < $pt->n_parts
  set $pp = $pt->parts[$i]
  printf "partition %d: state %d conn %p attempt %lu inflight %d registering %d registrations %lu reconnect timer flags 0x%x head %p next_op_index %lu waiting %p\n", $i, $pp->state, $pp->conn, $pp->attempt, $pp->inflight, $pp->registering, $pp->registration, $pp->reconnect_timer.flags, $pp->head, $pp->next_op_index, $pp->waiting_head
  if $pp->head
    printf "  first pending op index %lu\n", $pp->head->index
  end
  if $pp->conn
    printf "  connection state %d listeners %p requests %p waiters %p queued items %lu\n", $pp->conn->state, $pp->conn->listeners, $pp->conn->requests, $pp->conn->waiters, (unsigned long)$pp->conn->out.n_items
  end
  printf "  counters: "
  output $pp->counters
  printf "\n  batcher: "
  output $pp->batcher
  printf "\n"
  set $i = $i + 1
end
set $t = $t + 1
end
