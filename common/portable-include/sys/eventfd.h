/* Portable shape (common/portable-include/README.md). */
#error "<sys/eventfd.h> is Linux's: the portable shape of sandy does without it (launcher/sys/platform.h)"
