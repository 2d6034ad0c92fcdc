#!/usr/bin/env python3
"""test/tools/check_pgxn_meta.py [META.json]

Checks a META.json against the PGXN Meta Spec v1.0.0
(https://pgxn.org/spec/, https://rfcs.pgxn.org/0001-meta-spec-v1.html):
the required properties (name, abstract, version, maintainer, license,
provides, meta-spec) and every optional one the spec defines (description,
generated_by, tags, no_index, prereqs, release_status, resources), with
their types: Terms, Tags, semantic versions, version ranges, URIs, license
names, and custom properties only as x_ or X_.  Prints each violation and
exits 1 if there is any, else prints "META.json is OK".  Standard library
only: no validator of the spec is packaged for Debian (PGXN::Meta::Validator
is on CPAN, pgxn_meta on crates.io)."""
import json
import re
import sys
import urllib.parse

# Semantic Versioning 1.0.0, as the spec takes it (with a prerelease suffix
# of letters and digits after the patch number, e.g. 1.0.0beta1).
VERSION = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)([A-Za-z][0-9A-Za-z-]*)?$")
RANGE_PART = re.compile(r"^(?:(==|!=|>=|<=|>|<)\s*)?(\S+)$")
LICENSES = {
    "agpl_3", "apache_1_1", "apache_2_0", "artistic_1", "artistic_2", "bsd", "freebsd", "gfdl_1_2",
    "gfdl_1_3", "gpl_1", "gpl_2", "gpl_3", "lgpl_2_1", "lgpl_3_0", "mit", "mozilla_1_0", "mozilla_1_1",
    "openssl", "perl_5", "postgresql", "qpl_1_0", "ssleay", "sun", "zlib", "open_source", "restricted",
    "unrestricted", "unknown",
}
PHASES = {"configure", "build", "test", "runtime", "develop"}
RELATIONSHIPS = {"requires", "recommends", "suggests", "conflicts"}
RELEASE_STATUS = {"stable", "testing", "unstable"}
CUSTOM = re.compile(r"^[xX]_.")

errors = []


def error(where, message):
    errors.append("%s: %s" % (where, message))


def is_string(value):
    return isinstance(value, str) and len(value) > 0


def check_string(where, value):
    if not is_string(value):
        error(where, "must be a non-empty string, got %s" % json.dumps(value))
        return False
    return True


def check_term(where, value):
    if check_string(where, value) and (len(value) < 2 or re.search(r"[/\\\s\x00-\x1f\x7f]", value)):
        error(where, "must be a Term (2 or more characters, no slash, backslash, space or control), got %s"
              % json.dumps(value))


def check_tag(where, value):
    if check_string(where, value) and (not 2 <= len(value) <= 255 or re.search(r"[/\\\x00-\x1f\x7f]", value)):
        error(where, "must be a Tag (2 to 255 characters, no slash, backslash or control), got %s"
              % json.dumps(value))


def check_version(where, value):
    if check_string(where, value) and not VERSION.match(value):
        error(where, "must be a semantic version such as 1.0.0, got %s" % json.dumps(value))


def check_range(where, value):
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0:
        return  # 0: any version
    if not check_string(where, value):
        return
    for part in value.split(","):
        m = RANGE_PART.match(part.strip())
        if not m or (m.group(2) != "0" and not VERSION.match(m.group(2))):
            error(where, "must be a version range such as \">= 1.2.0, < 2.0.0\", got %s" % json.dumps(value))
            return


def check_uri(where, value):
    if check_string(where, value):
        parts = urllib.parse.urlparse(value)
        if not parts.scheme or not (parts.netloc or parts.path):
            error(where, "must be a URI, got %s" % json.dumps(value))


def check_path(where, value):
    if check_string(where, value) and (value.startswith("/") or "\\" in value or ".." in value.split("/")):
        error(where, "must be a relative path in unix form inside the distribution, got %s" % json.dumps(value))


def check_object(where, value, known, required=()):
    """value is an object whose keys are those of `known` (name -> checker)
    or custom ones; the `required` ones are present."""
    if not isinstance(value, dict):
        error(where, "must be an object, got %s" % json.dumps(value))
        return
    for key in required:
        if key not in value:
            error(where, "lacks the required property \"%s\"" % key)
    for key, item in value.items():
        if key in known:
            known[key]("%s.%s" % (where, key), item)
        elif not CUSTOM.match(key):
            error(where, "has \"%s\", which the spec does not define (custom properties begin with x_)" % key)


def check_maintainer(where, value):
    if isinstance(value, list):
        if not value:
            error(where, "must not be an empty array")
        for i, item in enumerate(value):
            check_string("%s[%d]" % (where, i), item)
    else:
        check_string(where, value)


def check_license(where, value):
    if isinstance(value, str):
        if value not in LICENSES:
            error(where, "%s is not one of the spec's license names (%s)" % (json.dumps(value), ", ".join(sorted(LICENSES))))
    elif isinstance(value, list):
        if not value:
            error(where, "must not be an empty array")
        for i, item in enumerate(value):
            check_license("%s[%d]" % (where, i), item)
            if isinstance(item, list):
                error("%s[%d]" % (where, i), "must be a license name")
    elif isinstance(value, dict):
        if not value:
            error(where, "must not be an empty object")
        for name, url in value.items():
            check_string("%s (a license name)" % where, name)
            check_uri("%s.%s" % (where, name), url)
    else:
        error(where, "must be a license name, an array of them, or an object of names and URIs")


def check_provides(where, value):
    if not isinstance(value, dict) or not value:
        error(where, "must be an object of at least one extension")
        return
    for name, extension in value.items():
        check_term("%s (an extension name)" % where, name)
        check_object("%s.%s" % (where, name), extension,
                     {"file": check_path, "version": check_version, "abstract": check_string,
                      "docfile": check_path},
                     required=("file", "version"))


def check_meta_spec(where, value):
    def spec_version(w, v):
        if v != "1.0.0":
            error(w, "must be \"1.0.0\" for this spec, got %s" % json.dumps(v))
    check_object(where, value, {"version": spec_version, "url": check_uri}, required=("version",))


def check_tags(where, value):
    if not isinstance(value, list) or not value:
        error(where, "must be an array of at least one tag")
        return
    for i, tag in enumerate(value):
        check_tag("%s[%d]" % (where, i), tag)


def check_no_index(where, value):
    def paths(w, v):
        items = v if isinstance(v, list) else [v]
        if not items:
            error(w, "must not be an empty array")
        for i, item in enumerate(items):
            check_path("%s[%d]" % (w, i), item)
    check_object(where, value, {"file": paths, "directory": paths})


def check_prereqs(where, value):
    def relationship(w, v):
        if not isinstance(v, dict):
            error(w, "must be an object of extension names and version ranges")
            return
        for name, version_range in v.items():
            check_term("%s (an extension name)" % w, name)
            check_range("%s.%s" % (w, name), version_range)

    def phase(w, v):
        check_object(w, v, {r: relationship for r in RELATIONSHIPS})
    check_object(where, value, {p: phase for p in PHASES})


def check_release_status(where, value):
    if value not in RELEASE_STATUS:
        error(where, "must be one of %s, got %s" % (", ".join(sorted(RELEASE_STATUS)), json.dumps(value)))


def check_resources(where, value):
    def bugtracker(w, v):
        check_object(w, v, {"web": check_uri, "mailto": check_string})

    def repository(w, v):
        check_object(w, v, {"url": check_uri, "web": check_uri, "type": check_string})
    check_object(where, value, {"homepage": check_uri, "bugtracker": bugtracker, "repository": repository})


def check_meta(meta):
    check_object("META.json", meta, {
        "name": check_term,
        "abstract": check_string,
        "description": check_string,
        "version": check_version,
        "maintainer": check_maintainer,
        "license": check_license,
        "provides": check_provides,
        "meta-spec": check_meta_spec,
        "generated_by": check_string,
        "tags": check_tags,
        "no_index": check_no_index,
        "prereqs": check_prereqs,
        "release_status": check_release_status,
        "resources": check_resources,
    }, required=("name", "abstract", "version", "maintainer", "license", "provides", "meta-spec"))


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "META.json"
    try:
        with open(path, encoding="utf-8") as f:
            meta = json.load(f)
    except (OSError, ValueError) as e:
        print("%s is not valid JSON: %s" % (path, e))
        sys.exit(1)
    check_meta(meta)
    if errors:
        print("%s is invalid:" % path)
        for e in errors:
            print("  " + e)
        sys.exit(1)
    print("%s is OK" % path)


if __name__ == "__main__":
    main()
