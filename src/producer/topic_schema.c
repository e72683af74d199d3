/* GET_SCHEMA for AUTO_PRODUCE. The answer is broker input: every field is checked before
 * a schema is built from it. @locality loop thread. */
#include "producer/topic_schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "net/connection.h"
#include "net/lookup.h"
#include "net/pool.h"
#include "schema/schema.h"

typedef struct fetch {
    pc_runtime_t *rt;
    char *topic;
    pc_topic_schema_cb cb;
    void *ctx;
} fetch_t;

static void finish(fetch_t *f, pulsarc_result res, pc_schema_t *schema, const char *detail)
{
    if (res != PULSARC_OK)
        pc_set_detail(detail);
    f->cb(res, schema, f->ctx);
    free(f->topic);
    free(f);
}

/* A schema from the protocol's Schema message; NULL (detail set, *res why) if it is
 * malformed or of a type this library cannot check against. */
static pc_schema_t *from_proto(const Pulsar__Proto__Schema *in, pulsarc_result *res)
{
    if (!in->name) {
        *res = pc_fail(PULSARC_ERR_PROTOCOL, "GET_SCHEMA_RESPONSE: a schema without a name");
        return NULL;
    }
    if ((int)in->type < 0 || (int)in->type > PULSARC_SCHEMA_PROTOBUF_NATIVE) {
        *res = pc_fail(PULSARC_ERR_UNSUPPORTED,
                       "the topic's schema type %d cannot be produced to with AUTO_PRODUCE",
                       (int)in->type);
        return NULL;
    }
    if (in->schema_data.len && !in->schema_data.data) {
        *res = pc_fail(PULSARC_ERR_PROTOCOL, "GET_SCHEMA_RESPONSE: schema data missing");
        return NULL;
    }
    pc_schema_t *s = pc_schema_alloc((pulsarc_schema_type)in->type, in->name, in->schema_data.data,
                                     in->schema_data.len);
    if (!s) {
        *res = pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < in->n_properties; i++) {
        const Pulsar__Proto__KeyValue *kv = in->properties[i];
        if (!kv || !kv->key || !kv->value) {
            *res = pc_fail(PULSARC_ERR_PROTOCOL, "GET_SCHEMA_RESPONSE: a malformed property");
            pc_schema_unref(s);
            return NULL;
        }
        if (pc_schema_put_property(s, kv->key, kv->value) != 0) {
            *res = pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
            pc_schema_unref(s);
            return NULL;
        }
    }
    *res = PULSARC_OK;
    if (s->type == PULSARC_SCHEMA_KEY_VALUE)
        *res = pc_schema_kv_split(s);
    else if ((s->type == PULSARC_SCHEMA_AVRO || s->type == PULSARC_SCHEMA_JSON) &&
             pc_avro_check_new((const char *)s->data, s->len, &s->avro) != PULSARC_OK)
        s->avro = NULL; /* avro-c cannot read it: its payloads go unchecked */
    if (*res != PULSARC_OK) {
        pc_schema_unref(s);
        return NULL;
    }
    return s;
}

static void on_answer(pc_conn_t *conn, pulsarc_result res, const Pulsar__Proto__BaseCommand *resp,
                      void *ctx)
{
    fetch_t *f = ctx;
    char detail[512];
    snprintf(detail, sizeof detail, "%s", pulsarc_last_error_detail());
    if (res == PULSARC_ERR_BROKER_TOPIC_NOT_FOUND) {
        /* "Topic not found or no-schema": the topic takes raw bytes. */
        finish(f, PULSARC_OK, NULL, NULL);
        return;
    }
    if (res != PULSARC_OK) {
        char msg[768];
        snprintf(msg, sizeof msg, "fetching the schema of %.200s: %s", f->topic, detail);
        finish(f, res, NULL, msg);
        return;
    }
    const Pulsar__Proto__CommandGetSchemaResponse *r = resp->getschemaresponse;
    if (!r || !r->schema) {
        finish(f, PULSARC_ERR_PROTOCOL, NULL, "GET_SCHEMA_RESPONSE without a schema");
        return;
    }
    pc_schema_t *s = from_proto(r->schema, &res);
    if (!s) {
        snprintf(detail, sizeof detail, "%s", pulsarc_last_error_detail());
        finish(f, res, NULL, detail);
        return;
    }
    if (s->type == PULSARC_SCHEMA_BYTES) {
        pc_schema_unref(s);
        s = NULL;
    }
    finish(f, PULSARC_OK, s, NULL);
}

static void on_ready(pc_conn_t *conn, pulsarc_result res, void *ctx)
{
    fetch_t *f = ctx;
    if (res != PULSARC_OK) {
        char detail[512];
        snprintf(detail, sizeof detail, "%s", pulsarc_last_error_detail());
        finish(f, res, NULL, detail);
        return;
    }
    Pulsar__Proto__CommandGetSchema req = PULSAR__PROTO__COMMAND_GET_SCHEMA__INIT;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    uint64_t rid = pc_conn_new_request_id(conn);
    req.request_id = rid;
    req.topic = f->topic;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__GET_SCHEMA;
    cmd.getschema = &req;
    pc_conn_request(conn, &cmd, rid, on_answer, f);
}

static void on_lookup(pulsarc_result res, const pc_host_port_t *logical,
                      const pc_host_port_t *physical, void *ctx)
{
    fetch_t *f = ctx;
    if (res != PULSARC_OK) {
        char detail[512];
        snprintf(detail, sizeof detail, "lookup of %.200s: %s", f->topic,
                 pulsarc_last_error_detail());
        finish(f, res, NULL, detail);
        return;
    }
    pc_conn_t *conn = pc_pool_get(f->rt->pool, logical, physical);
    if (!conn) {
        finish(f, PULSARC_ERR_NO_MEMORY, NULL, "out of memory");
        return;
    }
    pc_conn_when_ready(conn, on_ready, f);
}

void pc_topic_schema_fetch(pc_runtime_t *rt, const char *topic, pc_topic_schema_cb cb, void *ctx)
{
    fetch_t *f = calloc(1, sizeof *f);
    char *t = strdup(topic);
    if (!f || !t) {
        free(f);
        free(t);
        pc_set_detail("out of memory");
        cb(PULSARC_ERR_NO_MEMORY, NULL, ctx);
        return;
    }
    f->rt = rt;
    f->topic = t;
    f->cb = cb;
    f->ctx = ctx;
    pc_lookup_topic(rt, topic, on_lookup, f);
}
