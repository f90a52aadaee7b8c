package io.ferrite.broker.acl;

/**
 * The wire codes of Kafka's ACL enums (kafka-clients' {@code ResourceType}, {@code PatternType}, {@code AclOperation},
 * {@code AclPermissionType}): what CreateAcls, DescribeAcls and DeleteAcls carry and what {@link Authorizer} decides on.
 */
public final class AclCodes
{
    /** Code 0 of each enum: what a parse refuses. */
    public static final byte UNKNOWN = 0;
    /** Code 1 of each enum: a filter's "any". */
    public static final byte ANY = 1;

    // ResourceType
    public static final byte TOPIC = 2;
    public static final byte GROUP = 3;
    public static final byte CLUSTER = 4;
    public static final byte TRANSACTIONAL_ID = 5;
    public static final byte DELEGATION_TOKEN = 6;
    public static final byte USER = 7;
    /** Highest resource type code (for arrays indexed by type). */
    static final byte MAX_RESOURCE_TYPE = USER;

    // PatternType
    public static final byte MATCH = 2;
    public static final byte LITERAL = 3;
    public static final byte PREFIXED = 4;

    // AclOperation
    public static final byte ALL = 2;
    public static final byte READ = 3;
    public static final byte WRITE = 4;
    public static final byte CREATE = 5;
    public static final byte DELETE = 6;
    public static final byte ALTER = 7;
    public static final byte DESCRIBE = 8;
    public static final byte CLUSTER_ACTION = 9;
    public static final byte DESCRIBE_CONFIGS = 10;
    public static final byte ALTER_CONFIGS = 11;
    public static final byte IDEMPOTENT_WRITE = 12;
    public static final byte CREATE_TOKENS = 13;
    public static final byte DESCRIBE_TOKENS = 14;
    public static final byte TWO_PHASE_COMMIT = 15;
    static final byte MAX_OPERATION = TWO_PHASE_COMMIT;

    // AclPermissionType
    public static final byte DENY = 2;
    public static final byte ALLOW = 3;

    /** The one name of the cluster resource (Kafka's {@code Resource.CLUSTER_NAME}). */
    public static final String CLUSTER_NAME = "kafka-cluster";
    /** A LITERAL pattern of this name matches every resource of its type; a principal {@code User:*} every user. */
    public static final String WILDCARD = "*";
    public static final String WILDCARD_PRINCIPAL = "User:*";

    /** Each enum's names by code, for messages, and the codes Kafka parses (a code out of them parses as UNKNOWN). */
    static final String[] RESOURCE_TYPES = {"UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID",
        "DELEGATION_TOKEN", "USER"};
    static final String[] PATTERN_TYPES = {"UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED"};
    static final String[] OPERATIONS = {"UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER",
        "DESCRIBE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "CREATE_TOKENS",
        "DESCRIBE_TOKENS", "TWO_PHASE_COMMIT"};
    static final String[] PERMISSIONS = {"UNKNOWN", "ANY", "DENY", "ALLOW"};

    private AclCodes()
    {
    }

    /** Whether {@code code} is one of the enum's values Kafka parses, UNKNOWN aside. */
    static boolean known(final String[] names, final byte code)
    {
        return code > UNKNOWN && code < names.length;
    }

    /** The name of {@code code} in the enum of {@code names}. */
    static String name(final String[] names, final byte code)
    {
        return code >= 0 && code < names.length ? names[code] : "UNKNOWN";
    }
}
