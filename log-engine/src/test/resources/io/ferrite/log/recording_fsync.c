/*
 * LD_PRELOAD shim for TxnIndexFsyncOrderTest's child: once an fsync or fdatasync succeeded, the path
 * of its file or directory (read back from /proc/self/fd) goes to the end of FERRITE_FSYNC_LOG as
 * one line, in one write(2) with O_APPEND, so the lines keep the order of the calls and the child's
 * own lines written to the same file fall in between in their real order. It changes no call.
 * (broker's failing_fsync.c also fails chosen fsyncs; this one only watches, for a log-engine test.)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void note_synced(int fd)
{
    const char *to = getenv("FERRITE_FSYNC_LOG");
    char proc[64];
    char line[4200];
    ssize_t length;
    int out;
    if (to == NULL)
    {
        return;
    }
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    length = readlink(proc, line, sizeof line - 1);
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
