#include "schema/avro_names.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct names {
    char **full;
    size_t n, cap;
    const char *dup; /* the first name seen twice (one of full's) */
} names_t;

/* Remember full (taken over); false when it was there already, or out of memory (then
 * the definition goes to avro-c unchecked, as before). */
static bool note(names_t *ns, char *full)
{
    for (size_t i = 0; i < ns->n; i++) {
        if (strcmp(ns->full[i], full) == 0) {
            free(full);
            ns->dup = ns->full[i];
            return false;
        }
    }
    if (ns->n == ns->cap) {
        size_t cap = ns->cap ? 2 * ns->cap : 16;
        char **grown = realloc(ns->full, cap * sizeof *grown);
        if (!grown) {
            free(full);
            return false;
        }
        ns->full = grown;
        ns->cap = cap;
    }
    ns->full[ns->n++] = full;
    return true;
}

static bool is_named(const char *type)
{
    return strcmp(type, "record") == 0 || strcmp(type, "error") == 0 || strcmp(type, "enum") == 0 ||
           strcmp(type, "fixed") == 0;
}

/* The full name of a named type declared as name, with its own "namespace" attribute
 * (or NULL) inside the enclosing namespace (or ""). NULL when out of memory. */
static char *full_name(const char *name, const char *own_ns, const char *enclosing)
{
    const char *space = strchr(name, '.') ? "" : own_ns ? own_ns : enclosing;
    size_t len = strlen(space) + 1 + strlen(name) + 1;
    char *full = malloc(len);
    if (full)
        snprintf(full, len, "%s%s%s", space, *space ? "." : "", name);
    return full;
}

/* Walk one schema (a type name, a union, or a type object). Returns false to stop: a
 * name declared twice, or out of memory. */
static bool walk(json_t *j, const char *enclosing, names_t *ns)
{
    if (json_is_array(j)) {
        size_t i;
        json_t *branch;
        json_array_foreach(j, i, branch) if (!walk(branch, enclosing, ns)) return false;
        return true;
    }
    if (!json_is_object(j))
        return true;
    json_t *type = json_object_get(j, "type");
    if (!json_is_string(type))
        return walk(type, enclosing, ns); /* {"type": {...}} or {"type": [...]} */
    const char *t = json_string_value(type);
    if (strcmp(t, "array") == 0)
        return walk(json_object_get(j, "items"), enclosing, ns);
    if (strcmp(t, "map") == 0)
        return walk(json_object_get(j, "values"), enclosing, ns);
    json_t *name = json_object_get(j, "name");
    if (!is_named(t) || !json_is_string(name))
        return true;
    json_t *own = json_object_get(j, "namespace");
    char *full = full_name(json_string_value(name),
                           json_is_string(own) ? json_string_value(own) : NULL, enclosing);
    if (!full || !note(ns, full))
        return false;
    if (strcmp(t, "record") != 0 && strcmp(t, "error") != 0)
        return true;
    /* Names inside a record live in the record's namespace: its full name up to the last
     * dot. */
    const char *last_dot = strrchr(full, '.');
    char *inner = strndup(full, last_dot ? (size_t)(last_dot - full) : 0);
    if (!inner)
        return false;
    size_t i;
    json_t *field;
    bool go_on = true;
    json_array_foreach(json_object_get(j, "fields"), i, field)
    {
        if (!(go_on = walk(json_object_get(field, "type"), inner, ns)))
            break;
    }
    free(inner);
    return go_on;
}

bool pc_avro_declares_a_name_twice(const char *definition, size_t len, char *dup, size_t dup_cap)
{
    json_t *j = json_loadb(definition, len, 0, NULL);
    if (!j)
        return false;
    names_t ns = { 0 };
    walk(j, "", &ns);
    bool twice = ns.dup != NULL;
    if (twice && dup_cap)
        snprintf(dup, dup_cap, "%s", ns.dup);
    for (size_t i = 0; i < ns.n; i++)
        free(ns.full[i]);
    free(ns.full);
    json_decref(j);
    return twice;
}
