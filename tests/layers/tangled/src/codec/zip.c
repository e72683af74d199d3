#include "codec/missing.h"
