#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/topic_name.h"

/* Where Java's TopicName (Pulsar 4.0.8) accepts a name, the full name and partition below
 * are what it printed for the same input. We refuse a few names Java accepts: legacy
 * cluster-qualified v1 names, a leading '/' in short form, invalid UTF-8, control
 * characters. */

static pc_topic_name_t parse_ok(const char *in)
{
    pc_topic_name_t t;
    char err[256];
    int rc = pc_topic_name_parse(in, &t, err, sizeof err);
    cr_assert_eq(rc, 0, "'%s' rejected: %s", in, err);
    return t;
}

static void expect_full(const char *in, const char *full, int partition)
{
    pc_topic_name_t t = parse_ok(in);
    cr_expect_str_eq(t.full, full, "'%s' became '%s'", in, t.full);
    cr_expect_eq(t.partition, partition, "'%s' partition %d", in, t.partition);
}

static void expect_reject(const char *in, const char *why_contains)
{
    pc_topic_name_t t;
    char err[256];
    memset(err, 0, sizeof err);
    cr_expect_eq(pc_topic_name_parse(in, &t, err, sizeof err), -1, "'%s' was accepted",
                 in ? in : "(null)");
    cr_expect_neq(err[0], '\0', "no reason given for '%s'", in ? in : "(null)");
    if (why_contains)
        cr_expect(strstr(err, why_contains) != NULL, "reason for '%s' was: %s", in ? in : "(null)",
                  err);
}

Test(topic_name, short_names)
{
    pc_topic_name_t t = parse_ok("t");
    cr_expect_str_eq(t.full, "persistent://public/default/t");
    cr_expect_str_eq(t.domain, "persistent");
    cr_expect_str_eq(t.tenant, "public");
    cr_expect_str_eq(t.ns, "default");
    cr_expect_str_eq(t.local, "t");
    cr_expect_eq(t.partition, -1);

    t = parse_ok("tenant/ns/t");
    cr_expect_str_eq(t.full, "persistent://tenant/ns/t");
    cr_expect_str_eq(t.tenant, "tenant");
    cr_expect_str_eq(t.ns, "ns");
    cr_expect_str_eq(t.local, "t");

    expect_full("my-topic", "persistent://public/default/my-topic", -1);
    expect_full("tenant_1/ns.x=y:z/t", "persistent://tenant_1/ns.x=y:z/t", -1);
}

Test(topic_name, full_names)
{
    pc_topic_name_t t = parse_ok("non-persistent://tenant/ns/t");
    cr_expect_str_eq(t.domain, "non-persistent");
    cr_expect_str_eq(t.full, "non-persistent://tenant/ns/t");
    expect_full("persistent://tenant/ns/t", "persistent://tenant/ns/t", -1);
    /* Java matches the domain case-insensitively and writes it in lower case. */
    expect_full("PERSISTENT://tenant/ns/t", "persistent://tenant/ns/t", -1);
    expect_full("Non-Persistent://a/b/c", "non-persistent://a/b/c", -1);
    expect_full("persistent://public/default/a:b=c", "persistent://public/default/a:b=c", -1);
}

Test(topic_name, local_names_java_allows)
{
    expect_full("my topic", "persistent://public/default/my topic", -1);
    expect_full("\xe4\xb8\xbb\xe9\xa2\x98", "persistent://public/default/\xe4\xb8\xbb\xe9\xa2\x98",
                -1);
    expect_full("a$b%c#d?e", "persistent://public/default/a$b%c#d?e", -1);
    expect_full("persistent://a-partition-1/ns/t", "persistent://a-partition-1/ns/t", -1);
}

Test(topic_name, partition_suffix_follows_java)
{
    expect_full("persistent://t/ns/my-topic-partition-3", "persistent://t/ns/my-topic-partition-3",
                3);
    expect_full("my-topic-partition-0", "persistent://public/default/my-topic-partition-0", 0);
    expect_full("a-partition-1-partition-2",
                "persistent://public/default/a-partition-1-partition-2", 2);
    expect_full("topic-partition-2147483647",
                "persistent://public/default/topic-partition-2147483647", INT32_MAX);
    /* Not partitions, but valid topic names. */
    const char *not_partitions[] = { "topic-partition-01",
                                     "topic-partition--1",
                                     "topic-partition-+1",
                                     "topic-partition-2147483648",
                                     "topic-partition-99999999999999999999",
                                     "topic-partition-",
                                     "topic-partition-x",
                                     "topic-partition-1x",
                                     "topic-partition- 1",
                                     "partition-3",
                                     "topic_partition_3" };
    for (size_t i = 0; i < sizeof not_partitions / sizeof not_partitions[0]; i++)
        cr_expect_eq(parse_ok(not_partitions[i]).partition, -1, "%s", not_partitions[i]);
}

Test(topic_name, rejects_bad_shapes)
{
    expect_reject(NULL, "NULL");
    expect_reject("", "empty");
    expect_reject("a/b", "short name");
    expect_reject("a/b/c/d", "short name");
    expect_reject("/t", "short name");
    expect_reject("a//t", "empty namespace");
    expect_reject("/ns/t", "empty tenant");
    expect_reject("a/b/", "empty topic");
    expect_reject("persistent://public/default/", "empty topic");
    expect_reject("persistent://public/default", "expected");
    expect_reject("persistent://public", "expected");
    expect_reject("persistent://", "expected");
    expect_reject("persistent://public//t", "empty namespace");
    expect_reject("persistent:///ns/t", "empty tenant");
    expect_reject("persistent://public/default/t/", "legacy");
}

Test(topic_name, rejects_bad_domain)
{
    expect_reject("http://public/default/t", "unknown domain 'http'");
    expect_reject("://public/default/t", "unknown domain ''");
    expect_reject("segment://a/b/c/d", "unknown domain");
    expect_reject("persistentx://a/b/c", "unknown domain");
    expect_reject("persisten://a/b/c", "unknown domain");
}

Test(topic_name, rejects_legacy_v1_names)
{
    expect_reject("persistent://prop/cluster/ns/t", "legacy");
    expect_reject("persistent://public/default/a/b", "legacy");
}

Test(topic_name, rejects_bad_characters)
{
    expect_reject("persistent://ten ant/ns/t", "tenant may only contain");
    expect_reject("persistent://tenant/n$s/t", "namespace may only contain");
    expect_reject("ten\xc3\xa9/ns/t", "tenant may only contain");
    expect_reject("   ", "whitespace");
    expect_reject("tenant/ns/  ", "whitespace");
    expect_reject("t\tx", "control");
    expect_reject("t\n", "control");
    expect_reject("t\x01x", "control");
    expect_reject("t\x7f", "control");
    expect_reject("t\xff", "UTF-8");
    expect_reject("t\xc3", "UTF-8");
    expect_reject("t\xc0\xaf", "UTF-8");
    expect_reject("t\xed\xa0\x80", "UTF-8");
    expect_reject("t\xf4\x90\x80\x80", "UTF-8");
}

Test(topic_name, length_limits)
{
    pc_topic_name_t t;
    char name[1024];

    /* The longest local name that fits. */
    memset(name, 'x', 255);
    name[255] = '\0';
    cr_expect_eq(pc_topic_name_parse(name, &t, NULL, 0), 0);
    cr_expect_eq(strlen(t.local), 255);
    name[255] = 'x';
    name[256] = '\0';
    expect_reject(name, "longer");

    snprintf(name, sizeof name, "%0200d/ns/t", 0);
    expect_reject(name, "tenant longer");
    snprintf(name, sizeof name, "tenant/%0200d/t", 0);
    expect_reject(name, "namespace longer");

    /* Every part fits on its own but the whole does not. */
    char tenant[128], ns[128], local[256];
    memset(tenant, 'a', 127);
    tenant[127] = '\0';
    memset(ns, 'b', 127);
    ns[127] = '\0';
    memset(local, 'c', 250);
    local[250] = '\0';
    snprintf(name, sizeof name, "%s/%s/%s", tenant, ns, local);
    expect_reject(name, "longer");

    memset(name, 'x', 1000);
    name[1000] = '\0';
    expect_reject(name, "longer");
}

Test(topic_name, error_buffer_is_optional_and_bounded)
{
    pc_topic_name_t t;
    char small[8];
    cr_expect_eq(pc_topic_name_parse("a/b", &t, NULL, 0), -1);
    cr_expect_eq(pc_topic_name_parse("a/b", &t, small, sizeof small), -1);
    cr_expect_eq(strlen(small), sizeof small - 1);
    cr_expect_eq(pc_topic_name_parse("t", NULL, small, sizeof small), -1);
}

Test(topic_name, partition_names)
{
    pc_topic_name_t base = parse_ok("tenant/ns/orders");
    char out[600];
    cr_assert_eq(pc_topic_name_partition(&base, 0, out, sizeof out), 0);
    cr_expect_str_eq(out, "persistent://tenant/ns/orders-partition-0");
    cr_assert_eq(pc_topic_name_partition(&base, 12, out, sizeof out), 0);
    cr_expect_str_eq(out, "persistent://tenant/ns/orders-partition-12");

    /* The result parses back to the same partition. */
    pc_topic_name_t p = parse_ok(out);
    cr_expect_eq(p.partition, 12);
    cr_expect_str_eq(p.tenant, "tenant");

    /* A partition is not a base; negative indexes and short buffers are refused. */
    cr_expect_eq(pc_topic_name_partition(&p, 1, out, sizeof out), -1);
    cr_expect_eq(pc_topic_name_partition(&base, -1, out, sizeof out), -1);
    char tiny[20];
    cr_expect_eq(pc_topic_name_partition(&base, 1, tiny, sizeof tiny), -1);
    cr_expect_eq(pc_topic_name_partition(&base, 1, out, 0), -1);
    cr_expect_eq(pc_topic_name_partition(NULL, 1, out, sizeof out), -1);

    /* A base whose partition names would no longer fit is refused too. */
    char name[300];
    memset(name, 'x', 250);
    name[250] = '\0';
    pc_topic_name_t longbase = parse_ok(name);
    cr_expect_eq(pc_topic_name_partition(&longbase, 1, out, sizeof out), -1);

    pc_topic_name_t np = parse_ok("non-persistent://a/b/c");
    cr_assert_eq(pc_topic_name_partition(&np, 3, out, sizeof out), 0);
    cr_expect_str_eq(out, "non-persistent://a/b/c-partition-3");
}
