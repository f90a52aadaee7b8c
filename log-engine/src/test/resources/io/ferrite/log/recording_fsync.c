/*
 * LD_PRELOAD shim for TxnIndexFsyncOrderTest's child: once an fsync or fdatasync succeeded, the path
 * of its file or directory (read back from /proc/self/fd) goes to the end of FERRITE_FSYNC_LOG as
 * one line, in one write(2) with O_APPEND, so the lines keep the order of the calls and the child's
 * own lines written to the same file fall in between in their real order. It changes no call, but
 * for SwapFsyncFailureTest's child: once the file FERRITE_FAIL_FSYNC_TRIGGER exists, an fsync or fdatasync of a
 * file or directory whose path ends with FERRITE_FAIL_FSYNC_SUFFIX fails with EIO, as a disk losing a write (a
 * segment's flush fsyncs its log before it msyncs its indexes, so that is enough to fail one).
 * (broker's failing_fsync.c fails a server's fsyncs by path prefix, for the broker's tests.)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whether the trigger exists and path ends with the suffix to fail. */
static int failing(const char *path)
{
    const char *trigger = getenv("FERRITE_FAIL_FSYNC_TRIGGER");
    const char *suffix = getenv("FERRITE_FAIL_FSYNC_SUFFIX");
    size_t n;
    size_t s;
    if (trigger == NULL || suffix == NULL || access(trigger, F_OK) != 0)
    {
        return 0;
    }
    n = strlen(path);
    s = strlen(suffix);
    return n >= s && strcmp(path + n - s, suffix) == 0;
}

/* The path of fd's file or directory into path (of size bytes), as /proc/self/fd says; its length, or <= 0. */
static ssize_t fd_path(int fd, char *path, size_t size)
{
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    return readlink(proc, path, size - 1);
}

static int fd_failing(int fd)
{
    char path[4097];
    ssize_t length = fd_path(fd, path, sizeof path);
    if (length <= 0)
    {
        return 0;
    }
    path[length] = '\0';
    return failing(path);
}

static void note_synced(int fd)
{
    const char *to = getenv("FERRITE_FSYNC_LOG");
    char line[4200];
    ssize_t length;
    int out;
    if (to == NULL)
    {
        return;
    }
    length = fd_path(fd, line, sizeof line);
    if (length <= 0 || (out = open(to, O_WRONLY | O_APPEND | O_CREAT, 0644)) < 0)
    {
        return;
    }
    line[length++] = '\n';
    if (write(out, line, (size_t)length) != length)
    {
        /* a lost line fails the test, which then says what it saw */
    }
    close(out);
}

/* The C library's call, named, through its pointer looked up once; a success is noted. */
static int noted(int fd, const char *name, int (**libc)(int))
{
    int answer;
    if (fd_failing(fd))
    {
        errno = EIO;
        return -1;
    }
    if (*libc == NULL)
    {
        *libc = (int (*)(int))dlsym(RTLD_NEXT, name);
    }
    answer = (*libc)(fd);
    if (answer == 0)
    {
        note_synced(fd);
    }
    return answer;
}

int fsync(int fd)
{
    static int (*libc_fsync)(int);
    return noted(fd, "fsync", &libc_fsync);
}

int fdatasync(int fd)
{
    static int (*libc_fdatasync)(int);
    return noted(fd, "fdatasync", &libc_fdatasync);
}

