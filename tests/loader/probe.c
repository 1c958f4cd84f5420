/* The loader harness's probe: runs inside a root (chroot, or qemu-user with -L) under that root's own
 * glibc loader, and reports what the loader does with each member, as Python would import it.
 *
 *   probe [--preload PATH]... [--] MEMBER...
 *   probe --list [--preload PATH]...
 *
 * For each MEMBER, in a child process of its own (so no member's load changes another's): dlopen every
 * --preload PATH with RTLD_NOW | RTLD_LOCAL (what `import torch` leaves loaded: mapped, but not in the
 * global scope), then dlopen MEMBER with RTLD_NOW | RTLD_LOCAL, as CPython imports an extension module.
 * One line per member on stdout, tab-separated: "MEMBER\tok" or "MEMBER\tfail\tDLERROR" ("preload-fail"
 * when a preload itself does not load). Exit 0 once every member was tried.
 *
 * --list: dlopen the preloads as above, then print every object then loaded, in the loader's order, one
 * "loaded\tPATH" line each (the harness gives them to the loader's trace as LD_PRELOAD, so that what a
 * preload pulled in by its own search paths is loaded there too). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void one_line(const char* text) {
  /* dlerror text on one line: tabs and newlines become spaces. */
  for (const char* p = text; *p != '\0'; ++p) putchar(*p == '\t' || *p == '\n' ? ' ' : *p);
}

static int print_loaded(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  (void)data;
  if (info->dlpi_name != NULL && info->dlpi_name[0] != '\0') printf("loaded\t%s\n", info->dlpi_name);
  return 0;
}

int main(int argc, char** argv) {
  const char* preloads[64];
  int npre = 0, i = 1, list = 0;
  if (argc > 1 && strcmp(argv[1], "--list") == 0) {
    list = 1;
    i = 2;
  }
  for (; i < argc; ++i) {
    if (strcmp(argv[i], "--") == 0) {
      ++i;
      break;
    }
    if (strcmp(argv[i], "--preload") == 0 && i + 1 < argc && npre < 64) {
      preloads[npre++] = argv[++i];
      continue;
    }
    break;
  }
  if (list) {
    for (int k = 0; k < npre; ++k) {
      if (dlopen(preloads[k], RTLD_NOW | RTLD_LOCAL) == NULL) {
        printf("preload-fail\t");
        one_line(dlerror());
        putchar('\n');
      }
    }
    dl_iterate_phdr(print_loaded, NULL);
    return 0;
  }
  for (; i < argc; ++i) {
    fflush(stdout);
    const pid_t pid = fork();
    if (pid < 0) return 2;
    if (pid == 0) {
      for (int k = 0; k < npre; ++k) {
        if (dlopen(preloads[k], RTLD_NOW | RTLD_LOCAL) == NULL) {
          printf("%s\tpreload-fail\t", argv[i]);
          one_line(dlerror());
          putchar('\n');
          fflush(stdout);
          _exit(0);
        }
      }
      if (dlopen(argv[i], RTLD_NOW | RTLD_LOCAL) != NULL) {
        printf("%s\tok\n", argv[i]);
      } else {
        printf("%s\tfail\t", argv[i]);
        one_line(dlerror());
        putchar('\n');
      }
      fflush(stdout);
      _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status)) printf("%s\tcrash\tstatus %d\n", argv[i], status);
  }
  return 0;
}
