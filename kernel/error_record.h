/* An `error` record: a problem that does not stop the run by itself (a CPU
 * that did not start, a check a benchmark failed), said on screen too. */
#ifndef KERNEL_ERROR_RECORD_H
#define KERNEL_ERROR_RECORD_H

void error_record(const char *code, const char *msg);

#endif
