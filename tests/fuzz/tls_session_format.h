/* The input format of fuzz_tls_session: a broker session (broker_session_format.h) over
 * TLS, with damage to the TLS layer itself.
 *
 * Two TLS setup bytes come first, then the session's own setup bytes and program. The
 * program's opcodes are taken modulo BS_OP_COUNT + TS_OP_COUNT: below BS_OP_COUNT they are
 * the session's operations (their frames travel encrypted), above they are TLS_OP_*.
 *
 * TLS setup byte 0:
 *   bit 0     the broker speaks at most TLS 1.2 (else 1.3)
 *   bits 1-2  a fault in the broker's handshake (ts_fault_t)
 *   bit 3     the fault hits every connection (else only the first one)
 *   bit 4     the broker resumes no session (no tickets, no session ids): every
 *             connection of the input is a full handshake. Else it hands out sessions
 *             as OpenSSL does by default (TLS 1.3: two tickets after a full handshake),
 *             and a reconnect within the input resumes what the client kept
 * TLS setup byte 1: the fault's length (bytes of the broker's flight before a cut, or of
 *   garbage), times 8. */
#ifndef PC_FUZZ_TLS_SESSION_FORMAT_H
#define PC_FUZZ_TLS_SESSION_FORMAT_H

#include "broker_session_format.h"

#define TS_SETUP_BYTES 2

typedef enum ts_fault {
    TS_FAULT_NONE,
    TS_FAULT_CUT,     /* the broker sends part of its handshake flight, then hangs up */
    TS_FAULT_GARBAGE, /* the broker answers the ClientHello with garbage records */
    TS_FAULT_SILENT,  /* the broker hangs up on the ClientHello without a word */
} ts_fault_t;

/* Operations on the current connection's TLS layer (opcode BS_OP_COUNT + value). */
typedef enum ts_op {
    TS_OP_GARBAGE = 0,  /* len, then len bytes written on the socket under TLS */
    TS_OP_TRUNCATE,     /* cut: a PING is encrypted, only its first cut % size bytes sent */
    TS_OP_CLOSE_NOTIFY, /* k: the first k % 11 bytes of a PING frame, then close_notify;
                          bit 7: the broker hangs up right after */
    TS_OP_RENEGOTIATE,  /* flag: TLS 1.2 renegotiation (HelloRequest); under TLS 1.3 a
                          KeyUpdate, bit 0: asking the client to update too */
    TS_OP_RECORDS,      /* size: later plaintext goes in records of size % 17 bytes (0: as
                          large as fits) */
    TS_OP_COUNT
} ts_op_t;

#endif
