#include "common/buf.h"
