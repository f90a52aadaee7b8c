/*
 * LD_PRELOAD shim for FsyncFailureTest: once the file named by FERRITE_FAIL_FSYNC_TRIGGER exists,
 * fsync, fdatasync and msync of a file whose path starts with FERRITE_FAIL_FSYNC_PREFIX fail with
 * EIO, as a disk that loses a write does. Everything else goes to the C library's own call.
 * Why a shim and not device-mapper's dm-error: it needs no block device or kernel module in the
 * test's container, and it can fail one partition's files while the next directory's succeed.
 * With FERRITE_FSYNC_LOG set, it also appends the path of every file or directory fsynced or
 * fdatasynced (successfully) to that file, one line each (CreationDurabilityTest).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int armed(void)
{
    const char *trigger = getenv("FERRITE_FAIL_FSYNC_TRIGGER");
    return trigger != NULL && access(trigger, F_OK) == 0;
}

static int under_prefix(const char *path)
{
    const char *prefix = getenv("FERRITE_FAIL_FSYNC_PREFIX");
    return prefix != NULL && strncmp(path, prefix, strlen(prefix)) == 0;
}

static int fd_fails(int fd)
{
    char link[64];
    char path[4096];
    ssize_t n;
    if (!armed())
    {
        return 0;
    }
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    n = readlink(link, path, sizeof path - 1);
    if (n <= 0)
    {
        return 0;
    }
    path[n] = '\0';
    return under_prefix(path);
}

/* msync names memory, not a file: the mapping that holds addr says which file it is. */
static int mapping_fails(const void *addr)
{
    char line[4096 + 256];
    unsigned long at = (unsigned long)addr;
    int fails = 0;
    FILE *maps;
    if (!armed() || (maps = fopen("/proc/self/maps", "r")) == NULL)
    {
        return 0;
    }
    while (fgets(line, sizeof line, maps) != NULL)
    {
        unsigned long low, high;
        if (sscanf(line, "%lx-%lx", &low, &high) == 2 && at >= low && at < high)
        {
            char *path = strchr(line, '/');
            if (path != NULL)
            {
                path[strcspn(path, "\n")] = '\0';
                fails = under_prefix(path);
            }
            break;
        }
    }
    fclose(maps);
    return fails;
}

/* Appends the path of fd to FERRITE_FSYNC_LOG, if set: one write(2) of one line, so lines never interleave. */
static void record(int fd)
{
    const char *log = getenv("FERRITE_FSYNC_LOG");
    char link[64];
    char line[4097];
    ssize_t n;
    int out;
    if (log == NULL)
    {
        return;
    }
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    n = readlink(link, line, sizeof line - 2);
    if (n <= 0 || (out = open(log, O_WRONLY | O_APPEND | O_CREAT, 0644)) < 0)
    {
        return;
    }
    line[n] = '\n';
    if (write(out, line, (size_t)n + 1) < 0)
    {
        /* the test then misses a line and fails: nothing else to do here */
    }
    close(out);
}

/* The C library's own call, unless the fd's file is one to fail. */
static int sync_fd(int fd, const char *name, int (**real)(int))
{
    int result;
    if (fd_fails(fd))
    {
        errno = EIO;
        return -1;
    }
    if (*real == NULL)
    {
        *real = (int (*)(int))dlsym(RTLD_NEXT, name);
    }
    result = (*real)(fd);
    if (result == 0)
    {
        record(fd);
    }
    return result;
}

int fsync(int fd)
{
    static int (*real)(int);
    return sync_fd(fd, "fsync", &real);
}

int fdatasync(int fd)
{
    static int (*real)(int);
    return sync_fd(fd, "fdatasync", &real);
}

int msync(void *addr, size_t length, int flags)
{
    static int (*real)(void *, size_t, int);
    if (mapping_fails(addr))
    {
        errno = EIO;
        return -1;
    }
    if (real == NULL)
    {
        real = (int (*)(void *, size_t, int))dlsym(RTLD_NEXT, "msync");
    }
    return real(addr, length, flags);
}
