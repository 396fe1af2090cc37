/* What the POSIX files of the OS layer share; not part of os.h. */
#ifndef CUDNNCTL_POSIX_H
#define CUDNNCTL_POSIX_H

#include <elf.h>
#include <sys/types.h>

#include "../os.h"

/*
 * What this process is: ELF class, byte order, machine, and the Debian
 * multiarch triplet of its default library folders.  Known at compile
 * time for the usual architectures; otherwise read once from
 * /proc/self/exe.
 */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_DATA ELFDATA2LSB
#else
#define HOST_DATA ELFDATA2MSB
#endif

#ifndef EM_LOONGARCH
#define EM_LOONGARCH 258
#endif

#if defined(__x86_64__) && defined(__ILP32__)
#define HOST_MACHINE EM_X86_64
#define HOST_CLASS ELFCLASS32
#define HOST_TRIPLET "x86_64-linux-gnux32"
#elif defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#define HOST_CLASS ELFCLASS64
#define HOST_TRIPLET "x86_64-linux-gnu"
#elif defined(__i386__)
#define HOST_MACHINE EM_386
#define HOST_CLASS ELFCLASS32
#define HOST_TRIPLET "i386-linux-gnu"
#elif defined(__aarch64__) && defined(__LP64__)
#define HOST_MACHINE EM_AARCH64
#define HOST_CLASS ELFCLASS64
#define HOST_TRIPLET "aarch64-linux-gnu"
#elif defined(__arm__)
#define HOST_MACHINE EM_ARM
#define HOST_CLASS ELFCLASS32
#if defined(__ARM_PCS_VFP)
#define HOST_TRIPLET "arm-linux-gnueabihf"
#else
#define HOST_TRIPLET "arm-linux-gnueabi"
#endif
#elif defined(__powerpc64__)
#define HOST_MACHINE EM_PPC64
#define HOST_CLASS ELFCLASS64
#if HOST_DATA == ELFDATA2LSB
#define HOST_TRIPLET "powerpc64le-linux-gnu"
#else
#define HOST_TRIPLET "powerpc64-linux-gnu"
#endif
#elif defined(__s390x__)
#define HOST_MACHINE EM_S390
#define HOST_CLASS ELFCLASS64
#define HOST_TRIPLET "s390x-linux-gnu"
#elif defined(__riscv) && __riscv_xlen == 64
#define HOST_MACHINE EM_RISCV
#define HOST_CLASS ELFCLASS64
#define HOST_TRIPLET "riscv64-linux-gnu"
#elif defined(__loongarch64)
#define HOST_MACHINE EM_LOONGARCH
#define HOST_CLASS ELFCLASS64
#define HOST_TRIPLET "loongarch64-linux-gnu"
#endif

/* An OS error of a call on `path`, with the system's reason: ENOSPC is
 * CCTL_ENOSPACE, anything else CCTL_EIO. */
int cctl__posix_error(struct cctl_ctx *ctx, int err, const char *what,
		      const char *path);

/* True when `path` is a regular file (links followed) that this process
 * could load: an ELF file of its class, byte order and machine; *dev and
 * *ino identify it (image-posix.c). */
int cctl__elf_probe(const char *path, dev_t *dev, ino_t *ino);

#endif
