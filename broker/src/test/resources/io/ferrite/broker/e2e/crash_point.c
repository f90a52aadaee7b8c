/*
 * LD_PRELOAD shim for TransactionCrashPointTest: a SIGKILL of the whole process at a chosen fsync or
 * positional write, so that a crash lands in a window of a transaction that a kill at a random time
 * rarely hits (its Prepare* durable and no marker yet; some markers written, not all). The broker has
 * no hook for it: the shim only watches calls the JVM makes to the C library.
 *
 *   FERRITE_KILL_ARMED   a file: nothing happens while it does not exist (the test creates it just
 *                        before the request whose calls it wants to cut)
 *   FERRITE_KILL_CALL    "fsync" (the default): fsync(2) and fdatasync(2) (FileChannel.force), the kill
 *                        right after the call returned, before the JVM sees its result — what the fsync
 *                        covered is durable, whatever waited for it (an answer, the next step) never
 *                        happens;
 *                        "pwrite": pwrite(2)/pwrite64 (FileChannel.write at a position: the broker's
 *                        segment writes in ferrite.log.write.strategy=channel), the kill instead of the
 *                        call — the bytes it would have written never reach the file
 *   FERRITE_KILL_PATH    a string the file's path (read back from /proc/self/fd/N) must contain,
 *                        e.g. "/__transaction_state-" or "/ledger-"
 *   FERRITE_KILL_SUFFIX  optional: the path must also end with it, e.g. ".log" (the segment, not an index)
 *   FERRITE_KILL_SKIP    optional: how many such calls, once armed, go through before the one that kills
 *                        (0 by default: the first)
 *   FERRITE_KILL_LOG     optional: a file the shim appends "killed at <call> of <path>" to before the kill
 *
 * A SIGKILL keeps the page cache: what the process had written by then survives, fsynced or not, as
 * after any kill of the process (so in the mapped write strategy, a kill at an fsync finds every
 * append another thread had copied into its mapping by then). Everything else is passed through.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long matched;

/* Armed, and watching this call: the cheap checks first (a pwrite comes with every append in the channel strategy). */
static int watching(const char *call)
{
    const char *watched = getenv("FERRITE_KILL_CALL");
    const char *armed = getenv("FERRITE_KILL_ARMED");
    return strcmp(watched == NULL ? "fsync" : watched, call) == 0 && armed != NULL && access(armed, F_OK) == 0;
}

/* The file matches, and the calls to skip are spent (the count is atomic: several threads fsync and write). */
static int chosen(const char *path)
{
    const char *part = getenv("FERRITE_KILL_PATH");
    const char *suffix = getenv("FERRITE_KILL_SUFFIX");
    const char *skip = getenv("FERRITE_KILL_SKIP");
    size_t length = strlen(path);
    if (part == NULL || strstr(path, part) == NULL)
    {
        return 0;
    }
    if (suffix != NULL && (length < strlen(suffix) || strcmp(path + length - strlen(suffix), suffix) != 0))
    {
        return 0;
    }
    return __atomic_fetch_add(&matched, 1, __ATOMIC_SEQ_CST) >= (skip == NULL ? 0 : atol(skip));
}

static void kill_if_chosen(const char *call, int fd)
{
    char link[64];
    char path[4097];
    char line[4200];
    const char *log = getenv("FERRITE_KILL_LOG");
    ssize_t n;
    int out;
    if (!watching(call))
    {
        return;
    }
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    n = readlink(link, path, sizeof path - 1);
    if (n <= 0)
    {
        return;
    }
    path[n] = '\0';
    if (!chosen(path))
    {
        return;
    }
    if (log != NULL && (out = open(log, O_WRONLY | O_APPEND | O_CREAT, 0644)) >= 0)
    {
        n = snprintf(line, sizeof line, "killed at %s of %s\n", call, path);
        if (n > 0 && write(out, line, (size_t)n) < 0)
        {
            /* the test then sees no line and says so: nothing else to do here */
        }
        close(out);
    }
    kill(getpid(), SIGKILL);
}

/* The C library's sync call, through its pointer looked up once; then the kill, if this is the one. */
static int synced(int fd, const char *name, int (**real)(int))
{
    int result;
    if (*real == NULL)
    {
        *real = (int (*)(int))dlsym(RTLD_NEXT, name);
    }
    result = (*real)(fd);
    kill_if_chosen("fsync", fd);
    return result;
}

int fsync(int fd)
{
    static int (*real)(int);
    return synced(fd, "fsync", &real);
}

int fdatasync(int fd)
{
    static int (*real)(int);
    return synced(fd, "fdatasync", &real);
}

/* The JDK's FileChannel.write(buffer, position) calls this one (the large-file interface). */
ssize_t pwrite64(int fd, const void *buf, size_t count, off64_t offset)
{
    static ssize_t (*real)(int, const void *, size_t, off64_t);
    if (real == NULL)
    {
        real = (ssize_t (*)(int, const void *, size_t, off64_t))dlsym(RTLD_NEXT, "pwrite64");
    }
    kill_if_chosen("pwrite", fd);
    return real(fd, buf, count, offset);
}

ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset)
{
    return pwrite64(fd, buf, count, offset);
}
