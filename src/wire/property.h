/* A message property: a key and its value, both NUL-terminated. Here, below the producer,
 * so that the wire encoders take a message's properties as they are. */
#ifndef PC_PROPERTY_H
#define PC_PROPERTY_H

typedef struct pc_property {
    char *key;
    char *value;
} pc_property_t;

#endif
