"""polarize: the Streamlit entry point (``streamlit run app.py``)."""

import streamlit as st

st.set_page_config(page_title="polarize", page_icon=":material/scatter_plot:", layout="wide")
st.title("polarize")
st.write("Gradient flow drives softmax outputs toward one-hot, low-entropy solutions. The Explorer is coming.")
