#include "kernel/finish.h"

#include "arch/paging.h"
#include "kernel/console.h"
#include "kernel/exit.h"
#include "kernel/qrshow.h"
#include "kernel/serial.h"
#include "lib/record.h"

static uint32_t passed, failed;
static bool check_failed;

void finish_count_test(bool ok)
{
    if (ok)
        passed++;
    else
        failed++;
}

uint32_t finish_tests_passed(void) { return passed; }
uint32_t finish_tests_failed(void) { return failed; }

const char *finish_status_name(enum run_status status)
{
    switch (status) {
    case RUN_OK: return STATUS_OK;
    case RUN_FAIL: return STATUS_FAIL;
    case RUN_CONFIG: return STATUS_CONFIG;
    case RUN_FAULT: return STATUS_FAULT;
    }
    return STATUS_FAIL;
}

void finish_mark_failed(void) { check_failed = true; }

void finish_run(enum run_status status)
{
    if (status == RUN_OK && check_failed)
        status = RUN_FAIL;
    uint32_t records = rec_count();
    /* The summary is on screen before the done record leaves: whoever
     * reads the screen after done (a person, a screendump) sees it. A
     * framebuffer lies outside the identity map, so paging goes off first
     * (it may still be on after a fault). */
    paging_disable();
    console_status(" cleanroom: done, status %s", finish_status_name(status));
    if (!serial_present()) /* the probe list has scrolled away by now: say it again */
        console_say(VGA_RED, "these records were not delivered: no working serial port");
    console_say(status == RUN_OK ? VGA_GREEN : VGA_RED, "done: status %s, %u records, %u tests passed, %u failed",
                finish_status_name(status), records + 1, passed, failed);
    rec_begin(REC_DONE);
    rec_str("status", finish_status_name(status));
    rec_u64("records", records);
    rec_u64("passed", passed);
    rec_u64("failed", failed);
    rec_end();
    qrshow_results(); /* qr=: never returns when the codes are shown */
    exit_now(status);
}

void finish_exit_only(enum run_status status) { exit_now(status); }
