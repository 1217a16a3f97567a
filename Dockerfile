# ray-webhook container image.
#   docker build -t ray-webhook:0.1.0 .
# The runtime image holds the binary, the shared libraries it loads, the CA
# bundle, its users, and the dpkg records of the Debian packages those files
# came from: nothing else (no shell). Where the binary comes from:
#   BINARY=source   (the default) the build stage installs the Debian -dev
#                   packages and builds exactly as scripts/build.sh does (it
#                   runs that script, which trains the profile-guided build of
#                   the core on the review fixtures in tests/fixtures/reviews/);
#   BINARY=context  the context's build/ray-webhook, which scripts/build.sh
#                   built on Debian 12 from the same sources (scripts/image.sh
#                   passes it when its caller has just built the commit): the
#                   same program without compiling it a second time. Only the
#                   runtime libraries are installed to find what it loads.
# Both stages come from the same Debian 12 image; the runtime image is FROM scratch.
ARG DEBIAN_IMAGE=debian:bookworm-slim
ARG BINARY=source

FROM ${DEBIAN_IMAGE} AS binary-source
WORKDIR /src
# The package list lives in scripts/install-deps.sh; installing before copying
# the sources keeps this layer cached across source changes.
COPY scripts/install-deps.sh scripts/
RUN bash scripts/install-deps.sh && rm -rf /var/lib/apt/lists/*
COPY CMakeLists.txt ./
COPY include/ include/
COPY src/ src/
COPY pgo/ pgo/
COPY tests/fixtures/reviews/ tests/fixtures/reviews/
COPY scripts/build.sh scripts/build-with-profile.sh scripts/
# scripts/build-with-profile.sh build -DCMAKE_BUILD_TYPE=Release -DRAY_WEBHOOK_BUILD_TESTS=OFF
# cmake --build build -j2
RUN bash scripts/build.sh

FROM ${DEBIAN_IMAGE} AS binary-context
WORKDIR /src
COPY scripts/install-deps.sh scripts/
RUN bash scripts/install-deps.sh --runtime && rm -rf /var/lib/apt/lists/*
COPY build/ray-webhook build/

FROM binary-${BINARY} AS staged
# The runtime root filesystem, in /out: the stripped binary, each shared
# library it loads (the dynamic loader and glibc's included) at its Debian
# path, the CA bundle, the users and groups root, nobody and nonroot (65532),
# /tmp, and, for each Debian package a file came from, its dpkg record in
# var/lib/dpkg/status.d/ with the checksums of the files shipped and its
# copyright file (what CVE scanners and licence reviews read, as distroless
# images have them). No shell, no package manager. The last step runs the
# binary inside /out: the image's own files alone must run it.
ARG TRIPLET=x86_64-linux-gnu
RUN set -eu; \
    out=/out; lib=/usr/lib/${TRIPLET}; \
    mkdir -p $out/usr/local/bin $out$lib $out/usr/lib64 $out/etc/ssl/certs $out/var/lib/dpkg/status.d \
      $out/tmp $out/run $out/usr/share/doc; \
    chmod 1777 $out/tmp; \
    ln -s usr/lib $out/lib; ln -s usr/lib64 $out/lib64; ln -s ../run $out/var/run; \
    cp build/ray-webhook $out/usr/local/bin/; \
    strip --strip-unneeded $out/usr/local/bin/ray-webhook; \
    : > /tmp/shipped; \
    ship() { cp -L "$1" "$out$2"; echo "$1 $2" >> /tmp/shipped; }; \
    for l in $(ldd build/ray-webhook | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\/.*ld-linux/ { print $1 }'); do \
      ship "$l" "$lib/${l##*/}"; \
    done; \
    interp=$(readelf -l build/ray-webhook | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p'); \
    ln -s "../lib/${TRIPLET}/${interp##*/}" "$out/usr/lib64/${interp##*/}"; \
    ship /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt; \
    printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' > $out/etc/passwd; \
    printf 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n' > $out/etc/group; \
    printf 'passwd: files\ngroup: files\nhosts: files dns\n' > $out/etc/nsswitch.conf; \
    while read -r from to; do \
      owner=$(dpkg -S "$from" 2>/dev/null || dpkg -S "$(readlink -f "$from")" 2>/dev/null || dpkg -S "/usr$from" 2>/dev/null || true); \
      pkg=${owner%%:*}; \
      case "$from" in /etc/ssl/certs/ca-certificates.crt) pkg=ca-certificates ;; esac; \
      [ -n "$pkg" ] || { echo "no Debian package owns $from" >&2; exit 1; }; \
      [ -f $out/var/lib/dpkg/status.d/$pkg ] || { \
        dpkg-query -s "$pkg" > $out/var/lib/dpkg/status.d/$pkg; \
        mkdir -p $out/usr/share/doc/$pkg; \
        cp -L /usr/share/doc/$pkg/copyright $out/usr/share/doc/$pkg/copyright; }; \
      (cd $out && md5sum "${to#/}") >> $out/var/lib/dpkg/status.d/$pkg.md5sums; \
    done < /tmp/shipped; \
    for f in $out/var/lib/dpkg/status.d/*.md5sums; do sort -k2 -o "$f" "$f"; done; \
    chroot $out /usr/local/bin/ray-webhook --version

FROM scratch
LABEL org.opencontainers.image.title="ray-webhook" \
      org.opencontainers.image.description="Kubernetes admission webhook for the Pods of KubeRay clusters"
COPY --from=staged /out/ /
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# A numeric, non-root user, so Kubernetes' runAsNonRoot can check it.
USER 65532:65532
EXPOSE 8443
ENTRYPOINT ["ray-webhook", "serve", "--cert-dir", "/tmp/k8s-webhook-server/serving-certs"]
