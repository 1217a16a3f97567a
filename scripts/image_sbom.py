#!/usr/bin/env python3
"""The software bill of materials of the ray-webhook image, as SPDX 2.3 JSON.

Reads the image's root filesystem (ROOT): the Debian packages dpkg recorded
(var/lib/dpkg/status), the libraries the build copied in with the package each
came from (usr/local/share/ray-webhook/bundled-libraries.tsv, written by the
Dockerfile), and ray-webhook itself. Prints the document on stdout; the same
image gives the same document (no clock is read: created is --epoch).
"""
import argparse
import datetime
import json
import os
import sys

BUNDLED = "usr/local/share/ray-webhook/bundled-libraries.tsv"


def dpkg_packages(root):
    """Installed packages of ROOT's dpkg database: (name, version, arch)."""
    packages, fields = [], {}
    with open(os.path.join(root, "var/lib/dpkg/status"), encoding="utf-8") as status:
        for line in list(status) + ["\n"]:
            if line.strip() == "":
                if fields.get("Status", "").endswith(" installed"):
                    packages.append((fields["Package"], fields["Version"], fields.get("Architecture", "all")))
                fields = {}
            elif not line[0].isspace() and ":" in line:
                key, value = line.split(":", 1)
                fields[key] = value.strip()
    return sorted(packages)


def bundled_libraries(root):
    """(file, package, version) of each library copied next to the binary."""
    path = os.path.join(root, BUNDLED)
    rows = []
    with open(path, encoding="utf-8") as tsv:
        for line in tsv:
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3 or not all(parts):
                sys.exit(f"{BUNDLED}: not FILE<TAB>PACKAGE<TAB>VERSION: {line!r}")
            rows.append(tuple(parts))
    return sorted(rows)


def spdx_id(kind, name):
    safe = "".join(c if c.isalnum() or c in ".-" else "-" for c in name)
    return f"SPDXRef-{kind}-{safe}"


def deb_purl(name, version, arch):
    return f"pkg:deb/debian/{name}@{version}?arch={arch}&distro=debian-12"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--revision", required=True)
    ap.add_argument("--digest", required=True)
    ap.add_argument("--epoch", type=int, required=True)
    a = ap.parse_args()

    created = datetime.datetime.fromtimestamp(a.epoch, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    own = spdx_id("Package", a.name)

    def package(name, ident, version, **extra):
        """An SPDX package whose licenses and copyright this document does not assert."""
        return {"name": name, "SPDXID": ident, "versionInfo": version, "downloadLocation": "NOASSERTION",
                "filesAnalyzed": False, "licenseConcluded": "NOASSERTION", "licenseDeclared": "NOASSERTION",
                "copyrightText": "NOASSERTION", **extra}

    def debian(name, ident, version, arch, **extra):
        return package(name, ident, version, supplier="Organization: Debian",
                       externalRefs=[{"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl",
                                      "referenceLocator": deb_purl(name, version, arch)}], **extra)

    packages = [package(a.name, own, a.version,
                        comment=f"revision {a.revision}; image {a.digest}; /usr/local/bin/{a.name}")]
    relationships = [{"spdxElementId": "SPDXRef-DOCUMENT", "relationshipType": "DESCRIBES", "relatedSpdxElement": own}]

    def relate(kind, ident):
        relationships.append({"spdxElementId": own, "relationshipType": kind, "relatedSpdxElement": ident})

    installed = dpkg_packages(a.root)
    arch = {name: pkg_arch for name, _, pkg_arch in installed}
    for name, version, pkg_arch in installed:
        packages.append(debian(name, spdx_id("Deb", name), version, pkg_arch))
        relate("CONTAINS", spdx_id("Deb", name))
    for library, name, version in bundled_libraries(a.root):
        packages.append(debian(name, spdx_id("Bundled", library), version, arch.get(name, "amd64"),
                               comment=f"/usr/local/lib/{a.name}/{library}, copied from the build stage"))
        relate("DEPENDS_ON", spdx_id("Bundled", library))
    document = {
        "spdxVersion": "SPDX-2.3",
        "dataLicense": "CC0-1.0",
        "SPDXID": "SPDXRef-DOCUMENT",
        "name": f"{a.name}-{a.version}",
        "documentNamespace": f"urn:{a.name}:spdx:{a.version}:{a.revision}",
        "creationInfo": {"created": created, "creators": [f"Tool: {a.name} scripts/image_sbom.py"]},
        "packages": packages,
        "relationships": relationships,
    }
    json.dump(document, sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
