package dev.laneway.engine.laya;

import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/** The kinds of request the Laya router tells apart, by the answer they need. */
public enum RequestClass {
    CODE("code"),
    PROSE("prose"),
    SHORT("short"),
    /** A state of {@value LayaRouter#LONG_DOC_BYTES} bytes or more; decided by length alone. */
    LONG_DOC("long_doc");

    /** The classes a classifier chooses among, in the order the scorer's question lists them. */
    public static final List<RequestClass> CHOICES = List.of(CODE, PROSE, SHORT);

    private final String wireName;

    RequestClass(String wireName) {
        this.wireName = wireName;
    }

    /** The name the policy, the log and the header use. */
    public String wireName() {
        return wireName;
    }

    /** The class a policy key names, if any. */
    public static Optional<RequestClass> named(String name) {
        return Arrays.stream(values()).filter(c -> c.wireName.equals(name)).findFirst();
    }

    /** Every class's name, for messages. */
    public static String names() {
        return String.join(", ", Arrays.stream(values()).map(RequestClass::wireName).toList());
    }
}
