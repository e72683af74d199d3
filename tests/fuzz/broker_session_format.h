/* The input format of fuzz_broker_session, shared with the seed generator.
 *
 * An input is four setup bytes (a schema for the GET_SCHEMA answer may follow them, see
 * setup byte 3), then a program of operations until the input ends. Every
 * operation is one opcode byte (taken modulo BS_OP_COUNT) followed by its argument bytes;
 * an argument past the end of the input reads as 0, so every byte string is a program.
 * After each operation the client has handled what it wrote or called (its loop runs
 * until it waits for the broker or a timer; no time passes). Time passes only where the
 * program waits (WAIT, WAIT_EVENT), and it is virtual: the client's timers due by then
 * fire, without real waiting.
 *
 * Setup byte 0 (the client and the topic):
 *   bit 0     batchingEnabled
 *   bit 1     chunkingEnabled
 *   bits 2-3  partitions answered by the broker: 0 (not partitioned), 2, 3 or 1
 *   bit 4     lookups are redirected once before the Connect answer
 *   bit 5     lookup answers name the other broker and say proxy_through_service_url
 *             (the producer's connection goes to the service URL, naming that broker)
 *   bit 6     a fixed producerName
 *   bit 7     compressionType lz4
 * Setup byte 1 (the messages):
 *   bits 0-3  messages sent once the producer is registered, before the program runs
 *   bits 4-5  sendTimeoutMs: 0 (none), 10, 30, 100
 *   bit 6     the first PRODUCER is answered with a retryable error
 *   bit 7     PRODUCER_SUCCESS reports last_sequence_id 41 instead of -1
 * Setup byte 2 (sizes and the end):
 *   bits 0-1  max_message_size in CONNECTED: 5 MiB, 4096, 1024, 640
 *   bits 2-3  payload size: 8, 100, 700, 3000 bytes
 *   bit 4     batcherType key_based
 *   bit 5     maxPendingMessages 4 (sends beyond fail with QUEUE_FULL)
 *   bit 6     pulsarc_producer_free before the client is destroyed (else after)
 *   bit 7     lazyStartPartitionedProducers
 * Setup byte 3 (schemas; 0 is a producer without one, as before this byte existed):
 *   bits 0-1  the producer's schema: none, AVRO (a record of one bytes field), STRING,
 *             AUTO_PRODUCE (the topic's schema is fetched with GET_SCHEMA at creation)
 *   bits 2-3  schema_version in the automatic PRODUCER_SUCCESS: absent, 8 bytes, 1 byte,
 *             65 bytes (one more than a broker may send)
 *   bits 4-5  the automatic GET_SCHEMA answer: an AVRO record (as above), a KEY_VALUE
 *             INLINE (STRING key, INT32 value), the error "no schema" (raw bytes), or
 *             a schema read from the input right after this byte: type byte, definition
 *             length byte and bytes, property count byte (% 4) and for each a key
 *             length byte and bytes and a value length byte and bytes
 *   bit 6     schemaValidationEnabled false (payloads reach the broker unchecked)
 *   bit 7     logLevel debug (else info): every debug line is formatted too. Formatting a
 *             session's hundred-odd debug lines costs more than most of what it tests,
 *             so only the inputs with this bit set pay for it
 * The session's payloads match the schema they are sent with (the producer's, the topic's
 * when its automatic answer is known, or the message's own), unless a SEND says otherwise.
 *
 * References to things the broker has seen (used by BS_OP_CMD arguments). A command that
 * names a recorded request, producer or SEND goes to the connection that one came from
 * (while it is open); any other command goes to the current connection.
 *   request ref  < 0x80: the (ref % n)-th most recent request from the client;
 *                0xff: request id 2^64-1 (what a broker uses for its own commands);
 *                otherwise the literal id ref & 0x7f.
 *   producer ref < 0x80: the (ref % n)-th producer id seen in a PRODUCER command;
 *                otherwise the literal id ref & 0x7f.
 *   sequence ref bits 0-4 pick the (i % n)-th oldest SEND the broker has not receipted
 *                yet; bits 5-7: 0-3 its sequence id, 4 one less, 5 one more, 6 its
 *                highest_sequence_id, 7 the literal bits 0-4. */
#ifndef PC_FUZZ_BROKER_SESSION_FORMAT_H
#define PC_FUZZ_BROKER_SESSION_FORMAT_H

#define BS_SETUP_BYTES 4

typedef enum bs_op {
    BS_OP_RAW,        /* len, then len bytes written to the current connection as they are */
    BS_OP_CMD,        /* bs_cmd selector, then its arguments: one framed broker command */
    BS_OP_SEND,       /* flags: 1 + (flags & 3) messages; bit 2 explicit sequence id (next
                         byte), bit 3 a key, bit 4 deliver_at (never batched), bit 5 each
                         message has a schema of its own (JSON and INT64 in turn:
                         GET_OR_CREATE_SCHEMA), bit 6 a payload that does not match */
    BS_OP_USE_CONN,   /* index: the current connection becomes the (index % n)-th open one */
    BS_OP_AUTO,       /* flag: toggle one automatic answer (bs_auto, modulo BS_AUTO_COUNT) */
    BS_OP_SYNC,       /* let the client handle everything written so far (what it sends
                         meanwhile is answered); every operation ends so now, the opcode
                         keeps its number for the corpus */
    BS_OP_WAIT,       /* t: serve the client while t % 32 + 1 ms pass (timers fire) */
    BS_OP_WAIT_EVENT, /* serve until the client does something: writes a frame, opens a
                         connection or calls back (bounded: a few ms) */
    BS_OP_HANGUP,     /* the broker closes the current connection */
    BS_OP_APP,        /* what: 0 flush_async, 1 close_async, 2 producer_free */
    BS_OP_REFUSE,     /* mode for new connections: 0 accept, 1 fail to connect, 2 accept
                         and hang up at once (modulo 3) */
    BS_OP_COUNT
} bs_op_t;

/* Broker commands BS_OP_CMD can build; the arguments follow the selector byte. */
typedef enum bs_cmd {
    BS_CMD_CONNECTED, /* protocol version, max size choice (as setup byte 2) */
    BS_CMD_PING,
    BS_CMD_PONG,
    BS_CMD_ERROR,            /* request ref, server error, flags: bit 0 with a message */
    BS_CMD_SUCCESS,          /* request ref */
    BS_CMD_PRODUCER_SUCCESS, /* request ref, flags: bit 0 name, bit 1 last_sequence_id =
                                next byte, bit 2 producer_ready false, bits 3-4
                                schema_version as setup byte 3 bits 2-3 */
    BS_CMD_LOOKUP,           /* request ref, response type (% 4), flags: bit 0
                                authoritative, bit 1 proxy, bit 2 error code, bits 3-4 URL
                                (broker-1, broker-2, unparsable, absent) */
    BS_CMD_PARTITIONS,       /* request ref, partitions, flags: bit 0 Failed, bit 1 error */
    BS_CMD_RECEIPT,          /* producer ref, sequence ref, flags: bit 0 message id
                                (ledger, entry bytes follow), bit 1 highest_sequence_id */
    BS_CMD_SEND_ERROR,       /* producer ref, sequence ref, server error */
    BS_CMD_CLOSE_PRODUCER,   /* producer ref, request ref */
    BS_CMD_TOPIC_MIGRATED,   /* producer ref, resource type (% 3), flags: bit 0 URLs, bits
                                1-2 brokerServiceUrl (broker-2, unparsable, absent, an
                                http:// one), bits 3-4 brokerServiceUrlTls (broker-2's,
                                a pulsar:// one, absent, unparsable) */
    BS_CMD_AUTH_CHALLENGE,
    BS_CMD_BARE,           /* type byte: a BaseCommand of that type without its body */
    BS_CMD_SCHEMA_VERSION, /* request ref, flags: bit 0 error code (next byte), bits 1-2
                                schema_version: 8 bytes, absent, empty, 65 bytes
                                (GET_OR_CREATE_SCHEMA_RESPONSE) */
    BS_CMD_GET_SCHEMA,     /* request ref, flags: bit 0 error code (next byte), bit 1 a
                                schema, read as setup byte 3 describes
                                (GET_SCHEMA_RESPONSE) */
    BS_CMD_COUNT
} bs_cmd_t;

/* Answers the broker gives by itself; BS_OP_AUTO toggles them. All start on except
 * receipts, so the messages sent at setup are in flight when the program starts. */
typedef enum bs_auto {
    BS_AUTO_CONNECT,  /* CONNECT -> CONNECTED */
    BS_AUTO_LOOKUP,   /* LOOKUP -> Connect, PARTITIONED_METADATA -> the partition count */
    BS_AUTO_PRODUCER, /* PRODUCER -> PRODUCER_SUCCESS */
    BS_AUTO_RECEIPT,  /* SEND -> SEND_RECEIPT */
    BS_AUTO_CLOSE,    /* CLOSE_PRODUCER -> SUCCESS */
    BS_AUTO_PONG,     /* PING -> PONG */
    BS_AUTO_SCHEMA,   /* GET_SCHEMA -> setup byte 3's answer, GET_OR_CREATE_SCHEMA -> a
                          new 8-byte version for each schema */
    BS_AUTO_COUNT
} bs_auto_t;

#endif
