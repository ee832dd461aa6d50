package org.ferrodl.exception;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Constructor;
import java.lang.reflect.Modifier;
import org.junit.jupiter.api.Test;

class ExceptionTableTest {

    /** The native facade throws these by name with ThrowNew, which needs a public (String) constructor. */
    @Test
    void everyExceptionHasAPublicStringConstructorAndTheDocumentedParent() throws Exception {
        Object[][] table = {
            {FerroIllegalArgumentException.class, IllegalArgumentException.class},
            {DL4JInvalidConfigException.class, FerroIllegalArgumentException.class},
            {DL4JInvalidInputException.class, FerroIllegalArgumentException.class},
            {DataSetFormatException.class, FerroIllegalArgumentException.class},
            {NativeStateException.class, IllegalStateException.class},
            {NativePanicException.class, NativeStateException.class},
            {RelayException.class, NativeStateException.class},
            {NativeMemoryException.class, NativeStateException.class},
            {NativeLibraryUnavailableException.class, RuntimeException.class},
        };
        for (Object[] row : table) {
            Class<?> c = (Class<?>) row[0];
            assertEquals(row[1], c.getSuperclass(), c.getName());
            Constructor<?> ctor = c.getConstructor(String.class);
            assertTrue(Modifier.isPublic(ctor.getModifiers()));
            Throwable t = (Throwable) ctor.newInstance("boom " + c.getSimpleName());
            assertEquals("boom " + c.getSimpleName(), t.getMessage());
        }
    }
}
