// Clang's thread-safety attributes, as macros, so that which mutex guards
// which member is written next to the member and checked by the compiler.
//
// Contract: under clang the macros expand to the attributes its
// -Wthread-safety analysis reads (the capability attributes of Clang's
// "Thread Safety Analysis" documentation); under any other compiler they
// expand to nothing, so annotated code builds unchanged with GCC. They are
// only declarations: nothing here changes what the code does.
#pragma once

#if defined(__clang__)
#define RAY_WEBHOOK_THREAD_ATTRIBUTE(x) __attribute__((x))
#else
#define RAY_WEBHOOK_THREAD_ATTRIBUTE(x)
#endif

// On a class: its objects are capabilities (a mutex).
#define CAPABILITY(name) RAY_WEBHOOK_THREAD_ATTRIBUTE(capability(name))
// On a class: an RAII object that holds a capability for its lifetime.
#define SCOPED_CAPABILITY RAY_WEBHOOK_THREAD_ATTRIBUTE(scoped_lockable)
// On a data member: read or written only with the capability held.
#define GUARDED_BY(x) RAY_WEBHOOK_THREAD_ATTRIBUTE(guarded_by(x))
// On a pointer member: what it points to is read or written only with the capability held.
#define PT_GUARDED_BY(x) RAY_WEBHOOK_THREAD_ATTRIBUTE(pt_guarded_by(x))
// On a function: its callers must hold the capabilities.
#define REQUIRES(...) RAY_WEBHOOK_THREAD_ATTRIBUTE(requires_capability(__VA_ARGS__))
// On a function: its callers must not hold the capabilities (it takes them).
#define EXCLUDES(...) RAY_WEBHOOK_THREAD_ATTRIBUTE(locks_excluded(__VA_ARGS__))
// On a function: it takes the capabilities (or, on a member of a capability, the object itself).
#define ACQUIRE(...) RAY_WEBHOOK_THREAD_ATTRIBUTE(acquire_capability(__VA_ARGS__))
// On a function: it gives the capabilities back.
#define RELEASE(...) RAY_WEBHOOK_THREAD_ATTRIBUTE(release_capability(__VA_ARGS__))
// On a function: the analysis does not look inside it (for the few places it cannot follow).
#define NO_THREAD_SAFETY_ANALYSIS RAY_WEBHOOK_THREAD_ATTRIBUTE(no_thread_safety_analysis)
