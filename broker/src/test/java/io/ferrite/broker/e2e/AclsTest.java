package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.errors.SecurityDisabledException;
import org.apache.kafka.common.message.CreateAclsRequestData;
import org.apache.kafka.common.message.CreateAclsResponseData;
import org.apache.kafka.common.message.DeleteAclsRequestData;
import org.apache.kafka.common.message.DeleteAclsResponseData;
import org.apache.kafka.common.message.DescribeAclsRequestData;
import org.apache.kafka.common.message.DescribeAclsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.requests.CreateAclsRequest;
import org.apache.kafka.common.requests.DeleteAclsRequest;
import org.apache.kafka.common.requests.DescribeAclsRequest;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * DescribeAcls, CreateAcls and DeleteAcls answered as a Kafka 4.4 node with no authorizer answers them (each answer
 * below taken from one started with {@code /work/shared/kafka-ref}): SECURITY_DISABLED, raised by kafka-clients'
 * Admin as {@code SecurityDisabledException} and printed by {@code kafka-acls.sh} (AclCommand) as Kafka's.
 */
class AclsTest
{
    private static final AclBinding BINDING = new AclBinding(new ResourcePattern(ResourceType.TOPIC, "t1", PatternType.LITERAL),
        new AccessControlEntry("User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW));

    @TempDir
    Path dir;

    @Test
    void adminCallsFailWithSecurityDisabledAsOnKafka() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin())
        {
            assertSecurityDisabled("No Authorizer is configured on the broker", admin.describeAcls(AclBindingFilter.ANY).values());
            assertSecurityDisabled("No Authorizer is configured.", admin.createAcls(List.of(BINDING)).all());
            assertSecurityDisabled("No Authorizer is configured.", admin.deleteAcls(List.of(BINDING.toFilter())).all());
        }
    }

    @Test
    void everyVersionIsAnsweredInKafkasShape() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            final var advertised = raw.apiVersions().apiKeys();
            for (final ApiKeys api : List.of(ApiKeys.DESCRIBE_ACLS, ApiKeys.CREATE_ACLS, ApiKeys.DELETE_ACLS))
            {
                assertEquals(List.of((short)1, (short)3), List.of(advertised.find(api.id).minVersion(), advertised.find(api.id).maxVersion()),
                    api + " advertised as Kafka 4.4");
            }
            for (short v = 1; v <= 3; v++)
            {
                ByteBuffer body = raw.exchange(ApiKeys.DESCRIBE_ACLS, v, new DescribeAclsRequest.Builder(AclBindingFilter.ANY).build(v).data());
                assertEquals("DescribeAclsResponseData(throttleTimeMs=0, errorCode=54, errorMessage='No Authorizer is configured on the broker', "
                    + "resources=[])", new DescribeAclsResponseData(new ByteBufferAccessor(body), v).toString(), "v" + v);
                assertEquals(0, body.remaining());

                final CreateAclsRequestData creations = new CreateAclsRequestData().setCreations(List.of(
                    CreateAclsRequest.aclCreation(BINDING), CreateAclsRequest.aclCreation(BINDING)));
                body = raw.exchange(ApiKeys.CREATE_ACLS, v, creations);
                assertEquals("CreateAclsResponseData(throttleTimeMs=0, results=[AclCreationResult(errorCode=54, "
                    + "errorMessage='No Authorizer is configured.'), AclCreationResult(errorCode=54, errorMessage='No Authorizer is configured.')])",
                    new CreateAclsResponseData(new ByteBufferAccessor(body), v).toString(), "v" + v);
                body = raw.exchange(ApiKeys.CREATE_ACLS, v, new CreateAclsRequestData());
                assertEquals("CreateAclsResponseData(throttleTimeMs=0, results=[])",
                    new CreateAclsResponseData(new ByteBufferAccessor(body), v).toString(), "v" + v);

                final DeleteAclsRequestData filters = new DeleteAclsRequestData().setFilters(List.of(
                    DeleteAclsRequest.deleteAclsFilter(AclBindingFilter.ANY), DeleteAclsRequest.deleteAclsFilter(BINDING.toFilter())));
                body = raw.exchange(ApiKeys.DELETE_ACLS, v, filters);
                assertEquals("DeleteAclsResponseData(throttleTimeMs=0, filterResults=[DeleteAclsFilterResult(errorCode=54, "
                    + "errorMessage='No Authorizer is configured.', matchingAcls=[]), DeleteAclsFilterResult(errorCode=54, "
                    + "errorMessage='No Authorizer is configured.', matchingAcls=[])])",
                    new DeleteAclsResponseData(new ByteBufferAccessor(body), v).toString(), "v" + v);
                assertEquals(0, body.remaining());
            }
        }
    }

    /**
     * Kafka 4.4 refuses, while parsing, a request with an UNKNOWN (code 0) resource type, pattern type, operation or
     * permission type in its filter or any creation (kafka-clients' request classes throw; its network layer closes the
     * connection): so does Ferrite, for each of the four in each of the three APIs, whatever the version.
     */
    @Test
    void unknownElementsCloseTheConnectionAsKafkasParseRefusesThem() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()))
        {
            final int port = broker.broker.address().getPort();
            for (short v = 1; v <= 3; v++)
            {
                final short version = v;
                final List<java.util.function.Supplier<DescribeAclsRequestData>> describes = List.of(
                    () -> describeAny(version).setResourceTypeFilter((byte)0), () -> describeAny(version).setPatternTypeFilter((byte)0),
                    () -> describeAny(version).setOperation((byte)0), () -> describeAny(version).setPermissionType((byte)0));
                final List<java.util.function.Supplier<CreateAclsRequestData.AclCreation>> creations = List.of(
                    () -> CreateAclsRequest.aclCreation(BINDING).setResourceType((byte)0),
                    () -> CreateAclsRequest.aclCreation(BINDING).setResourcePatternType((byte)0),
                    () -> CreateAclsRequest.aclCreation(BINDING).setOperation((byte)0),
                    () -> CreateAclsRequest.aclCreation(BINDING).setPermissionType((byte)0));
                final List<java.util.function.Supplier<DeleteAclsRequestData.DeleteAclsFilter>> filters = List.of(
                    () -> DeleteAclsRequest.deleteAclsFilter(AclBindingFilter.ANY).setResourceTypeFilter((byte)0),
                    () -> DeleteAclsRequest.deleteAclsFilter(AclBindingFilter.ANY).setPatternTypeFilter((byte)0),
                    () -> DeleteAclsRequest.deleteAclsFilter(AclBindingFilter.ANY).setOperation((byte)0),
                    () -> DeleteAclsRequest.deleteAclsFilter(AclBindingFilter.ANY).setPermissionType((byte)0));
                for (int element = 0; element < 4; element++)
                {
                    final String what = "v" + v + " element " + element;
                    assertClosed(port, ApiKeys.DESCRIBE_ACLS, v, describes.get(element).get(), what);
                    // the unknown one second: the whole request is refused, not only its creation or filter
                    assertClosed(port, ApiKeys.CREATE_ACLS, v, new CreateAclsRequestData().setCreations(List.of(
                        CreateAclsRequest.aclCreation(BINDING), creations.get(element).get())), what);
                    assertClosed(port, ApiKeys.DELETE_ACLS, v, new DeleteAclsRequestData().setFilters(List.of(
                        DeleteAclsRequest.deleteAclsFilter(AclBindingFilter.ANY), filters.get(element).get())), what);
                }
            }
        }
    }

    private static DescribeAclsRequestData describeAny(final short version)
    {
        return new DescribeAclsRequest.Builder(AclBindingFilter.ANY).build(version).data();
    }

    /** The request gets no answer but the connection's end (not a timeout); the node answers a new connection. */
    private static void assertClosed(final int port, final ApiKeys api, final short version, final ApiMessage request,
        final String what) throws Exception
    {
        try (RawClient raw = new RawClient(port))
        {
            final IOException ex = assertThrows(IOException.class, () -> raw.exchange(api, version, request), api + " " + what);
            assertFalse(ex instanceof SocketTimeoutException, api + " " + what + ": not answered, but not closed either");
        }
        try (RawClient raw = new RawClient(port))
        {
            raw.apiVersions();
        }
    }

    @Test
    void aclCommandPrintsKafkasAnswer() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); KafkaToolSession tools = new KafkaToolSession())
        {
            assertPrints("No Authorizer is configured on the broker", acls(tools, broker, "--list"));
            assertPrints("No Authorizer is configured on the broker",
                acls(tools, broker, "--add", "--allow-principal", "User:alice", "--operation", "Read", "--topic", "t1"));
            assertPrints("No Authorizer is configured.",
                acls(tools, broker, "--remove", "--allow-principal", "User:alice", "--operation", "Read", "--topic", "t1", "--force"));
        }
    }

    /** kafka-acls.sh with {@code args}, in the test's child JVM of Kafka's tools. */
    private static KafkaTool.Run acls(final KafkaToolSession tools, final RunningBroker broker, final String... args) throws Exception
    {
        final String[] all = new String[args.length + 2];
        all[0] = "--bootstrap-server";
        all[1] = broker.bootstrap();
        System.arraycopy(args, 0, all, 2, args.length);
        return tools.run("org.apache.kafka.tools.AclCommand", all);
    }

    /** Kafka's AclCommand prints the error and its stack trace on stdout and exits 1, as it does against Kafka. */
    private static void assertPrints(final String message, final KafkaTool.Run run)
    {
        assertEquals(1, run.status(), run.toString());
        final List<String> lines = run.lines();
        assertEquals("Error while executing ACL command: org.apache.kafka.common.errors.SecurityDisabledException: " + message,
            lines.get(0), run.toString());
        assertEquals("java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.SecurityDisabledException: " + message,
            lines.get(1), run.toString());
        assertTrue(lines.contains("Caused by: org.apache.kafka.common.errors.SecurityDisabledException: " + message), run.toString());
    }

    private static void assertSecurityDisabled(final String message, final KafkaFuture<?> future)
    {
        final ExecutionException ex = assertThrows(ExecutionException.class, () -> future.get(30, TimeUnit.SECONDS));
        assertInstanceOf(SecurityDisabledException.class, ex.getCause());
        assertEquals(message, ex.getCause().getMessage());
    }
}
