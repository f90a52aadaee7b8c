/*
 * LD_PRELOAD shim for SwapCrashTest's kill points: SIGKILLs the process just before its FERRITE_KILL_AT-th (from 1)
 * unlink or rename of an existing file whose path contains FERRITE_KILL_MATCH, and, with FERRITE_KILL_CALLS set to
 * "unlink" or "rename", counts only those. So a test stops a segment replacement's abandon, or an open's completion of
 * a swap, between two of its own file operations, which a kill at a random time almost never hits. Everything else
 * goes to the C library's own call.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int calls;

/* Kills the process when this call, of kind, on path, is the chosen one. */
static void maybe_kill(const char *kind, const char *path)
{
    const char *match = getenv("FERRITE_KILL_MATCH");
    const char *only = getenv("FERRITE_KILL_CALLS");
    const char *at = getenv("FERRITE_KILL_AT");
    if (match == NULL || at == NULL || strstr(path, match) == NULL || (only != NULL && strcmp(only, kind) != 0)
        || access(path, F_OK) != 0)
    {
        return;
    }
    if (__sync_add_and_fetch(&calls, 1) == atoi(at))
    {
        raise(SIGKILL);
    }
}

int unlink(const char *path)
{
    static int (*libc_unlink)(const char *);
    maybe_kill("unlink", path);
    if (libc_unlink == NULL)
    {
        libc_unlink = (int (*)(const char *))dlsym(RTLD_NEXT, "unlink");
    }
    return libc_unlink(path);
}

int rename(const char *from, const char *to)
{
    static int (*libc_rename)(const char *, const char *);
    maybe_kill("rename", from);
    if (libc_rename == NULL)
    {
        libc_rename = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
    }
    return libc_rename(from, to);
}
