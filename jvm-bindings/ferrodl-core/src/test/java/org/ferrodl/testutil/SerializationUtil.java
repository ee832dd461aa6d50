package org.ferrodl.testutil;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;

/** Round trips through Java serialization and Kryo (no registrator, registration not required). */
public final class SerializationUtil {
    private SerializationUtil() {
    }

    @SuppressWarnings("unchecked")
    public static <T> T javaRoundTrip(T value) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(value);
        }
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
            return (T) in.readObject();
        }
    }

    public static Object kryoRoundTrip(Object value) {
        Kryo kryo = new Kryo();
        kryo.setRegistrationRequired(false);
        Output out = new Output(1024, -1);
        kryo.writeClassAndObject(out, value);
        out.close();
        Kryo other = new Kryo();
        other.setRegistrationRequired(false);
        try (Input in = new Input(out.toBytes())) {
            return other.readClassAndObject(in);
        }
    }
}
