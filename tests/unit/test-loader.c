#include "harness.h"
static void placeholder(void) {}
HARNESS_MAIN(TEST_ENTRY(placeholder))
