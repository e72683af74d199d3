/* The connection's handshake: CONNECT (after the authentication provider has its data)
 * and CONNECTED, and answers to the broker's AUTH_CHALLENGE. @locality loop thread. */
#include "net/connection_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/error.h"

/* The provider failed: its detail (which names a source, never a secret) explains the
 * close. Copied first, since closing sets the detail from it. */
static void close_for_auth(pc_conn_t *c, pulsarc_result r)
{
    char detail[512];
    snprintf(detail, sizeof detail, "authentication: %s", pulsarc_last_error_detail());
    pc_conn_close(c, r, detail);
}

/* The provider has its data ready (or there is no provider). */
/* pulsarc-VERSION, with the configured description if any. */
static const char *client_version(const pc_conn_t *c)
{
    return c->rt->net.client_version[0] ? c->rt->net.client_version : PC_CLIENT_VERSION;
}

static void write_connect(pc_conn_t *c)
{
    Pulsar__Proto__CommandConnect connect = PULSAR__PROTO__COMMAND_CONNECT__INIT;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    char proxy_to[300];
    pc_auth_data_t auth = { 0 };
    if (c->auth) {
        /* Asked afresh on every connect: a token file or supplier may have a new token. */
        pulsarc_result r = pc_auth_connect_data(c->auth, c->physical.host, &c->auth_session, &auth);
        if (r != PULSARC_OK) {
            close_for_auth(c, r);
            return;
        }
        connect.auth_method_name = (char *)pc_auth_method(c->auth);
        connect.has_auth_data = 1;
        connect.auth_data = (ProtobufCBinaryData){ auth.len, auth.bytes };
    }
    connect.client_version = (char *)client_version(c);
    connect.has_protocol_version = 1;
    connect.protocol_version = PC_PROTOCOL_VERSION;
    /* Without this flag the broker drops the connection when a token expires instead of
     * asking for a fresh one (AUTH_CHALLENGE), which pc_conn_answer_auth_challenge handles. */
    Pulsar__Proto__FeatureFlags features = PULSAR__PROTO__FEATURE_FLAGS__INIT;
    features.has_supports_auth_refresh = 1;
    features.supports_auth_refresh = 1;
    connect.feature_flags = &features;
    if (strcmp(c->logical.host, c->physical.host) || c->logical.port != c->physical.port) {
        /* Through a proxy: tell it which broker we mean. */
        snprintf(proxy_to, sizeof proxy_to, "%s:%d", c->logical.host, c->logical.port);
        connect.proxy_to_broker_url = proxy_to;
    }
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__CONNECT;
    cmd.connect = &connect;
    c->state = PC_CONN_HANDSHAKE;
    int rc = pc_conn_send_secret_command(c, &cmd);
    pc_auth_data_free(&auth);
    if (rc != 0 && c->state != PC_CONN_CLOSED)
        pc_conn_close(c, PULSARC_ERR_CONNECT_FAILED, "cannot send CONNECT");
}

/* The broker re-checks credentials (a "refresh" challenge once the token it holds
 * expires, authenticationRefreshCheckSeconds) or runs a multi-step method: answer with
 * fresh data and keep the connection. */
static void write_auth_response(pc_conn_t *c)
{
    pc_auth_data_t data;
    pulsarc_result r = pc_auth_connect_challenge(c->auth, c->physical.host, &c->auth_session,
                                                 c->challenge, c->challenge_len, &data);
    free(c->challenge);
    c->challenge = NULL;
    c->challenge_len = 0;
    if (r != PULSARC_OK) {
        close_for_auth(c, r);
        return;
    }
    Pulsar__Proto__AuthData out = PULSAR__PROTO__AUTH_DATA__INIT;
    out.auth_method_name = (char *)pc_auth_method(c->auth);
    out.has_auth_data = 1;
    out.auth_data = (ProtobufCBinaryData){ data.len, data.bytes };
    Pulsar__Proto__CommandAuthResponse resp = PULSAR__PROTO__COMMAND_AUTH_RESPONSE__INIT;
    resp.client_version = (char *)client_version(c);
    resp.response = &out;
    resp.has_protocol_version = 1;
    resp.protocol_version = PC_PROTOCOL_VERSION;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__AUTH_RESPONSE;
    cmd.authresponse = &resp;
    int rc = pc_conn_send_secret_command(c, &cmd);
    pc_auth_data_free(&data);
    if (rc != 0 && c->state != PC_CONN_CLOSED)
        pc_conn_close(c, PULSARC_ERR_CONNECTION_CLOSED, "cannot answer an auth challenge");
    else
        PC_DEBUG(c->rt->log, "answered an auth challenge from %s:%d (method %s)", c->physical.host,
                 c->physical.port, out.auth_method_name);
}

/* The provider's data is ready (or cannot be had): go on with what waited for it. A
 * closed connection cancelled its wait, so c is alive here. */
static void on_auth_ready(pc_auth_wait_t *w, pulsarc_result res)
{
    pc_conn_t *c = w->ctx;
    if (res != PULSARC_OK)
        close_for_auth(c, res);
    else if (c->auth_for_challenge)
        write_auth_response(c);
    else
        write_connect(c);
}

static void prepare_auth(pc_conn_t *c, bool for_challenge)
{
    c->auth_for_challenge = for_challenge;
    c->auth_started_ms = pc_mono_ms();
    pc_auth_prepare(c->auth, &c->auth_wait, on_auth_ready, c);
}

/* CONNECT goes out once the provider has its data: an OAuth2 token may have to be
 * fetched first (on the loop, without blocking it). The connection timeout still bounds
 * the whole, since the state stays short of READY. */
void pc_conn_send_connect(pc_conn_t *c)
{
    if (!c->auth) {
        write_connect(c);
        return;
    }
    prepare_auth(c, false);
}

/* Without a provider there is nothing to answer. A challenge that comes while an answer
 * is being prepared replaces the earlier one: one answer, with the latest data. */
void pc_conn_answer_auth_challenge(pc_conn_t *c, const Pulsar__Proto__CommandAuthChallenge *m)
{
    if (!c->auth) {
        pc_conn_close(c, PULSARC_ERR_UNSUPPORTED,
                      "broker asked for authentication, but no authPlugin is configured");
        return;
    }
    const Pulsar__Proto__AuthData *in = m->challenge;
    size_t len = in && in->has_auth_data ? in->auth_data.len : 0;
    uint8_t *copy = len ? malloc(len) : NULL;
    if (len && !copy) {
        pc_conn_close(c, PULSARC_ERR_NO_MEMORY, "no memory for an auth challenge");
        return;
    }
    if (len)
        memcpy(copy, in->auth_data.data, len);
    free(c->challenge);
    c->challenge = copy;
    c->challenge_len = len;
    if (!c->auth_wait.pending)
        prepare_auth(c, true);
}

/* connectionTimeoutMs bounds TCP connect, TLS handshake and CONNECT/CONNECTED together,
 * as in the official C++ client, which also reports it as a connect error
 * (ResultConnectError): CONNECT_FAILED, with the phase that did not finish. */
bool pc_conn_handshake_timed_out(pc_conn_t *c, uint64_t now)
{
    uint64_t limit = c->rt->limits.connection_timeout_ms;
    if (c->state == PC_CONN_READY || now - c->opened_ms < limit)
        return false;
    const char *phase = c->auth_wait.pending            ? "is still waiting for the authentication "
                                                          "provider"
                        : c->state == PC_CONN_HANDSHAKE ? "accepted the connection but did not "
                                                          "answer CONNECT"
                        : c->tls                        ? "did not finish the TLS handshake"
                                                        : "could not be connected to";
    char why[512];
    snprintf(why, sizeof why, "%.300s:%d %s within connectionTimeoutMs (%llu ms)", c->physical.host,
             c->physical.port, phase, (unsigned long long)limit);
    pc_conn_close(c, PULSARC_ERR_CONNECT_FAILED, why);
    return true;
}

void pc_conn_on_connected(pc_conn_t *c, const Pulsar__Proto__CommandConnected *m)
{
    if (c->state != PC_CONN_HANDSHAKE)
        return;
    c->server_protocol = m->has_protocol_version ? m->protocol_version : 0;
    /* The broker's limit bounds what we send. What we receive keeps the reader's limit
     * (the default size plus framing): a producer is only ever sent small commands, and a
     * broker announcing 2 GiB must not make us buffer that much (conn_io.c). */
    if (m->has_max_message_size && m->max_message_size > 0)
        c->max_message_size = (uint32_t)m->max_message_size;
    c->state = PC_CONN_READY;
    char via[300] = "";
    if (c->dial != &c->physical)
        snprintf(via, sizeof via, " through the SNI proxy %s:%d", c->dial->host, c->dial->port);
    PC_INFO(c->rt->log, "connected to %s:%d%s (server %s, protocol %d, max message %u)",
            c->physical.host, c->physical.port, via, m->server_version ? m->server_version : "?",
            c->server_protocol, c->max_message_size);
    ready_waiter_t *w = c->waiters;
    c->waiters = NULL;
    while (w && c->state == PC_CONN_READY) {
        ready_waiter_t *next = w->next;
        w->cb(c, PULSARC_OK, w->ctx);
        free(w);
        w = next;
    }
    /* A waiter closed the connection: the rest hear about it too. */
    while (w) {
        ready_waiter_t *next = w->next;
        w->cb(c, PULSARC_ERR_CONNECTION_CLOSED, w->ctx);
        free(w);
        w = next;
    }
    pc_conn_update_ref(c);
}
