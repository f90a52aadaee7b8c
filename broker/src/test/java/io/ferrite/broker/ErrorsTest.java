package io.ferrite.broker;

import io.ferrite.log.AppendResult;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ErrorsTest
{
    @Test
    void everyErrorConstantIsKafkasCodeForThatName() throws Exception
    {
        int checked = 0;
        final StringBuilder wrong = new StringBuilder();
        for (final Field field : Errors.class.getDeclaredFields())
        {
            if (Modifier.isStatic(field.getModifiers()) && field.getType() == short.class)
            {
                final org.apache.kafka.common.protocol.Errors kafka = org.apache.kafka.common.protocol.Errors.valueOf(field.getName());
                if (kafka.code() != field.getShort(null))
                {
                    wrong.append(field.getName()).append(" is ").append(kafka.code()).append(", not ").append(field.getShort(null)).append("; ");
                }
                checked++;
            }
        }
        assertEquals("", wrong.toString());
        assertTrue(checked > 20, "constants checked: " + checked);
    }

    @Test
    void appendFailuresMapToTheErrorsKafkaProducersExpect()
    {
        assertEquals(org.apache.kafka.common.protocol.Errors.CORRUPT_MESSAGE.code(), Errors.ofAppend(AppendResult.CORRUPT_MESSAGE));
        assertEquals(org.apache.kafka.common.protocol.Errors.MESSAGE_TOO_LARGE.code(), Errors.ofAppend(AppendResult.RECORD_TOO_LARGE));
        assertEquals(org.apache.kafka.common.protocol.Errors.UNSUPPORTED_FOR_MESSAGE_FORMAT.code(), Errors.ofAppend(AppendResult.UNSUPPORTED_MAGIC));
        assertEquals(org.apache.kafka.common.protocol.Errors.OUT_OF_ORDER_SEQUENCE_NUMBER.code(), Errors.ofAppend(AppendResult.OUT_OF_ORDER_SEQUENCE));
        assertEquals(org.apache.kafka.common.protocol.Errors.INVALID_PRODUCER_EPOCH.code(), Errors.ofAppend(AppendResult.INVALID_PRODUCER_EPOCH));
        assertEquals(org.apache.kafka.common.protocol.Errors.KAFKA_STORAGE_ERROR.code(), Errors.ofAppend(AppendResult.STORAGE_ERROR));
        assertEquals(org.apache.kafka.common.protocol.Errors.INVALID_TXN_STATE.code(), Errors.ofAppend(AppendResult.INVALID_TXN_STATE));
        assertEquals(org.apache.kafka.common.protocol.Errors.TRANSACTION_COORDINATOR_FENCED.code(),
            Errors.ofAppend(AppendResult.TRANSACTION_COORDINATOR_FENCED));
        assertEquals(0, Errors.ofAppend(AppendResult.DUPLICATE));
    }
}
