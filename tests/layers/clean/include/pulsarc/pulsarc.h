/* public API */
#include <stdint.h>
