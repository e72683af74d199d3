#include "partitioned/partitioned.h"
#include <pulsarc/pulsarc.h>
#include <uv.h>
