/* Schema versions. The producer's own schema goes into its PRODUCER command and the
 * broker's PRODUCER_SUCCESS says its version (again on every registration). A message
 * with a schema of its own waits, in order, until that schema has a version on this topic:
 * GET_OR_CREATE_SCHEMA asks once per schema (slots are found by hash, then compared), and
 * a refusal fails the messages waiting for that schema alone. @locality loop thread. */
#include "producer/pp_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/log.h"

/* The protocol's Schema message for s, in one block. */
typedef struct proto_schema {
    Pulsar__Proto__Schema schema;
    Pulsar__Proto__KeyValue *kvs;
    Pulsar__Proto__KeyValue **ptrs;
} proto_schema;

static proto_schema *proto_schema_new(const pc_schema_t *s)
{
    proto_schema *ps = calloc(1, sizeof *ps);
    size_t n = s->n_props ? s->n_props : 1;
    if (!ps || !(ps->kvs = calloc(n, sizeof *ps->kvs)) ||
        !(ps->ptrs = calloc(n, sizeof *ps->ptrs))) {
        pc_pp_schema_proto_free(ps);
        return NULL;
    }
    pulsar__proto__schema__init(&ps->schema);
    ps->schema.name = s->name;
    ps->schema.schema_data.data = s->data;
    ps->schema.schema_data.len = s->len;
    /* BYTES is the protocol's None; the other numbers are the protocol's. */
    ps->schema.type = s->type == PULSARC_SCHEMA_BYTES ? PULSAR__PROTO__SCHEMA__TYPE__None
                                                      : (Pulsar__Proto__Schema__Type)s->type;
    for (size_t i = 0; i < s->n_props; i++) {
        pulsar__proto__key_value__init(&ps->kvs[i]);
        ps->kvs[i].key = s->props[i].key;
        ps->kvs[i].value = s->props[i].value;
        ps->ptrs[i] = &ps->kvs[i];
    }
    ps->schema.n_properties = s->n_props;
    ps->schema.properties = ps->ptrs;
    return ps;
}

void pc_pp_schema_proto_free(void *mem)
{
    proto_schema *ps = mem;
    if (!ps)
        return;
    free(ps->kvs);
    free(ps->ptrs);
    free(ps);
}

int pc_pp_schema_fill_producer(pc_pp_t *pp, Pulsar__Proto__CommandProducer *reg, void **mem)
{
    *mem = NULL;
    if (!pc_schema_is_registered(pp->set.schema))
        return 0;
    proto_schema *ps = proto_schema_new(pp->set.schema);
    if (!ps)
        return -1;
    reg->schema = &ps->schema;
    *mem = ps;
    return 0;
}

/* Keep a version the broker sent, after checking its size. */
static pulsarc_result keep_version(pp_schema_slot *slot, const ProtobufCBinaryData *v,
                                   const char *where)
{
    if (v->len > PC_SCHEMA_VERSION_MAX)
        return pc_fail(PULSARC_ERR_PROTOCOL, "%s: a schema version of %zu bytes (at most %d)",
                       where, v->len, PC_SCHEMA_VERSION_MAX);
    if (v->len)
        memcpy(slot->version, v->data, v->len);
    slot->version_len = v->len;
    slot->has_version = v->len > 0;
    slot->state = SLOT_READY;
    return PULSARC_OK;
}

pulsarc_result pc_pp_schema_registered(pc_pp_t *pp, const Pulsar__Proto__CommandProducerSuccess *ok)
{
    static const ProtobufCBinaryData none = { 0, NULL };
    pulsarc_result res = keep_version(&pp->own_schema,
                                      ok->has_schema_version ? &ok->schema_version : &none,
                                      "PRODUCER_SUCCESS");
    if (res == PULSARC_OK && pp->own_schema.has_version && pp->own_schema.version_len == 8) {
        const uint8_t *v = pp->own_schema.version;
        int64_t n = 0;
        for (int i = 0; i < 8; i++)
            n = (int64_t)((uint64_t)n << 8 | v[i]);
        atomic_store(&pp->schema_version, n);
    }
    return res;
}

/* ---- messages with their own schema ---------------------------------------------- */

typedef struct fetch_ctx {
    pc_pp_t *pp;
    pp_schema_slot *slot;
} fetch_ctx;

/* Fail every waiting message of slot (the others keep their order). */
static void fail_waiting_of(pc_pp_t *pp, const pp_schema_slot *slot, pulsarc_result res,
                            const char *detail)
{
    pc_msg_t **link = &pp->waiting_head, *kept_tail = NULL;
    while (*link) {
        pc_msg_t *m = *link;
        if (m->schema_slot == slot) {
            *link = m->next;
            pc_pp_fail_message(pp, m, res, detail);
        } else {
            kept_tail = m;
            link = &m->next;
        }
    }
    pp->waiting_tail = kept_tail;
}

static void on_fetched(pc_conn_t *conn, pulsarc_result res, const Pulsar__Proto__BaseCommand *resp,
                       void *ctx)
{
    fetch_ctx *f = ctx;
    pc_pp_t *pp = f->pp;
    pp_schema_slot *slot = f->slot;
    free(f);
    if (!pc_pp_callback_returned(pp))
        return;
    slot->state = SLOT_UNKNOWN;
    char detail[512];
    snprintf(detail, sizeof detail, "%s", pulsarc_last_error_detail());
    if (res == PULSARC_OK) {
        const Pulsar__Proto__CommandGetOrCreateSchemaResponse *r = resp->getorcreateschemaresponse;
        if (!r)
            res = pc_fail(PULSARC_ERR_PROTOCOL, "GET_OR_CREATE_SCHEMA answered with the wrong "
                                                "command");
        else if (!r->has_schema_version || r->schema_version.len == 0)
            res = pc_fail(PULSARC_ERR_PROTOCOL, "GET_OR_CREATE_SCHEMA_RESPONSE without a version");
        else
            res = keep_version(slot, &r->schema_version, "GET_OR_CREATE_SCHEMA_RESPONSE");
        if (res != PULSARC_OK)
            snprintf(detail, sizeof detail, "%s", pulsarc_last_error_detail());
    }
    if (res == PULSARC_OK) {
        PC_DEBUG(pp->rt->log, "%s: schema \"%s\" (%s) registered", pp->topic, slot->schema->name,
                 pulsarc_schema_type_name(slot->schema->type));
    } else if (res == PULSARC_ERR_CONNECTION_CLOSED) {
        /* Asked again once registered on the next connection. */
        return;
    } else {
        char msg[640];
        snprintf(msg, sizeof msg, "registering the message's %s schema: %s",
                 pulsarc_schema_type_name(slot->schema->type), detail);
        PC_WARN(pp->rt->log, "%s: %s (%s)", pp->topic, msg, pulsarc_result_name(res));
        fail_waiting_of(pp, slot, res, msg);
    }
    if (pp->state == PP_READY)
        pc_pp_send_waiting(pp);
}

static void fetch(pc_pp_t *pp, pp_schema_slot *slot)
{
    proto_schema *ps = proto_schema_new(slot->schema);
    fetch_ctx *f = malloc(sizeof *f);
    if (!ps || !f) {
        pc_pp_schema_proto_free(ps);
        free(f);
        return; /* stays UNKNOWN: the next message or registration asks again */
    }
    Pulsar__Proto__CommandGetOrCreateSchema req = PULSAR__PROTO__COMMAND_GET_OR_CREATE_SCHEMA__INIT;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    uint64_t rid = pc_conn_new_request_id(pp->conn);
    req.request_id = rid;
    req.topic = pp->topic;
    req.schema = &ps->schema;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__GET_OR_CREATE_SCHEMA;
    cmd.getorcreateschema = &req;
    f->pp = pp;
    f->slot = slot;
    slot->state = SLOT_FETCHING;
    pp->inflight++;
    pc_conn_request(pp->conn, &cmd, rid, on_fetched, f);
    pc_pp_schema_proto_free(ps);
}

pp_schema_slot *pc_pp_schema_slot_of(pc_pp_t *pp, pc_msg_t *msg)
{
    pp_schema_slot *slot;
    if (!msg->schema || pc_schema_equal(msg->schema, pp->set.schema)) {
        slot = &pp->own_schema;
    } else {
        uint64_t h = pc_schema_hash(msg->schema);
        for (slot = pp->schemas; slot; slot = slot->next)
            if (slot->hash == h && pc_schema_equal(slot->schema, msg->schema))
                break;
        if (!slot) {
            slot = calloc(1, sizeof *slot);
            if (!slot)
                return NULL;
            slot->schema = pc_schema_ref(msg->schema);
            slot->hash = h;
            slot->next = pp->schemas;
            pp->schemas = slot;
        }
    }
    msg->schema_slot = slot;
    if (slot != &pp->own_schema && slot->state == SLOT_UNKNOWN && pp->state == PP_READY && pp->conn)
        fetch(pp, slot);
    return slot;
}

void pc_pp_schema_free_all(pc_pp_t *pp)
{
    while (pp->schemas) {
        pp_schema_slot *s = pp->schemas;
        pp->schemas = s->next;
        pc_schema_unref(s->schema);
        free(s);
    }
    pc_schema_unref(pp->set.schema);
    pp->set.schema = NULL;
}
